// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// How the kernel layers name their regions: the canonical name is "<layer>:<function>" (e.g.
// "syscall:read", "vfs:vfs_write", "fs:ext4_file_write_iter"), which the analyzers and the merge's
// checks take the layer from; the description names the layer for a person reading the archive.
#include <fmt/format.h>

#include <string>
#include <string_view>

namespace ezio::schema {

inline std::string region_canonical_name(std::string_view layer, std::string_view function) {
  return fmt::format("{}:{}", layer, function);
}
inline std::string region_description(std::string_view layer) {
  return fmt::format("eziotrace {} layer", layer);
}

}  // namespace ezio::schema
