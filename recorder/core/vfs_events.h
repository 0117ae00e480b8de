// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Names of the VFS layer's events and which syscalls stand for which VFS call in the derived mode.
#include <cstdint>
#include <string>
#include <string_view>

#include "record.h"

namespace ezio::recorder {

// "vfs_read" ... for enum ezio_vfs_op; "" for EZIO_VFS_NONE or an unknown value.
std::string_view vfs_op_name(uint8_t op);
// The VFS call a syscall (by name) makes, for the derived mode; EZIO_VFS_NONE if none is recorded.
uint8_t vfs_op_of_syscall(std::string_view syscall);
// Whether the syscall's return bounds the bytes the file system moved on each of its files: the
// FS layer's tracepoint runs are capped at it (bpf/fs.bpf.h, fs_capped_nr).
bool fs_bytes_capped(std::string_view syscall);
// Read, write, or other, for the layer table.
bool vfs_op_reads(uint8_t op);
bool vfs_op_writes(uint8_t op);

// Path of a file from its ezio_file_rec components (leaf first); "" if the record has none.
struct FilePath {
  std::string path;
  std::string mount_point;
  bool truncated = false;
};
FilePath file_path(const ezio_file_rec& r);

}  // namespace ezio::recorder
