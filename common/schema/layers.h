// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The layers of a trace by the names the archive gives them (EZIOTRACE::LOST::<layer>,
// EZIOTRACE::PROBE::<layer>, the "<layer>:" prefix of region canonical names, --layers).
#include <array>
#include <string_view>

namespace ezio::schema {

// The kernel's layers in enum ezio_layer order (bpf/record.h); "process" is the fork/exec/exit
// bookkeeping, recorded always and never a layer of its own in the analyzers.
inline constexpr std::array<std::string_view, 6> kKernelLayers = {"syscall",   "vfs",   "fs",
                                                                  "pagecache", "block", "process"};
// The kernel layers that hold I/O calls or page and block events (the first five above).
inline constexpr std::array<std::string_view, 5> kKernelIoLayers = {"syscall", "vfs", "fs",
                                                                    "pagecache", "block"};
// EZTrace's calls in a merged archive.
inline constexpr std::string_view kUserLayer = "user";

// The kernel layer's name, "unknown" out of range.
constexpr std::string_view kernel_layer_name(unsigned layer) {
  return layer < kKernelLayers.size() ? kKernelLayers[layer] : "unknown";
}

}  // namespace ezio::schema
