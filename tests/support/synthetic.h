// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Small archives written with the project's ArchiveWriter, following docs/trace-model.md, whose
// analyses are known exactly (the expected figures are derived in analyzers_test.cpp).
#include <filesystem>
#include <string>

namespace ezio::test {

// Thread 101 (process "app [100]") opens /data/a, writes 4096, 4096 and 100 bytes (400, 200 and
// 100 ns; the first with a 200 ns vfs_write inside), preads 8192 bytes at offset 0 (800 ns, an
// fs.point inside) and closes it; thread 102 writes 1000 bytes to /data/b (600 ns); device "block
// sda" writes 4096 bytes (1000 ns). 5 syscall events were lost. Its EZIOTRACE::STATUS is `status`,
// with EZIOTRACE::STATUS_REASON `reason` when not empty. Returns the anchor path.
std::filesystem::path write_basic_archive(const std::filesystem::path& dir,
                                          const std::string& status = "complete",
                                          const std::string& reason = "");

// An archive with definitions but no events.
std::filesystem::path write_empty_archive(const std::filesystem::path& dir);

}  // namespace ezio::test
