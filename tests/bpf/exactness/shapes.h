// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The rows of the exactness test (tests/bpf/exactness): the I/O shapes, and what each layer can
// see of them in each hook mode.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace ezio::test {

constexpr int64_t KiB = 1024, MiB = 1024 * KiB;
// The size of each read row's file: room for the largest read (8 MiB at an unaligned offset).
constexpr int64_t kReadFileSize = 9 * MiB;

struct Shape {
  const char* name;
  int64_t offset, len, count;
  std::vector<std::string> options;  // shape_io's: direct, append, vectors=N, via=CALL
  int64_t existing = 0;  // bytes the file holds beforehand (written, synced, out of the cache)
  bool disk_full = false;
  bool direct() const {
    return std::find(options.begin(), options.end(), "direct") != options.end();
  }
  // sendfile or splice: the syscall and VFS layers count no bytes for those calls (the syscall
  // layer's I/O calls are read, write and their vector forms; the derived VFS layer is made from
  // them), only the FS and the layers below.
  bool via() const {
    return std::any_of(options.begin(), options.end(),
                       [](const std::string& o) { return o.starts_with("via="); });
  }
};

extern const std::vector<Shape> kWrites, kReads;

// The hook mode of file system `fs` in the recording: its part of EZIOTRACE::PROBE::fs.
std::string hook_mode(const std::string& probe, const std::string& fs);
// The hook kind of the VFS layer in the recording, from EZIOTRACE::PROBE::vfs.
std::string vfs_hook_mode(const std::string& probe);
// Whether the FS layer has an event for the shape in that mode (docs/kernel-layers.md).
bool fs_sees(const std::string& probe, const std::string& fs, bool write, bool direct);
// Whether xfs's splice reads (sendfile, splice) go through xfs_file_read_iter, whose tracepoint
// the recorder takes: before 6.5, which gave xfs a splice_read of its own (not hooked).
bool xfs_splice_read_hooked();
// The pages a row dirties (none for reads, none for O_DIRECT but on btrfs since 6.15).
int64_t pages_dirtied_by(const Shape& shape, const std::string& fs, bool write, int64_t start,
                         int64_t moved);
// The pages [start, start + bytes) touches.
int64_t pages_touched(int64_t start, int64_t bytes);

}  // namespace ezio::test
