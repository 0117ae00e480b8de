// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/core/vfs_events.h"

#include <cstring>
#include <utility>

namespace ezio::recorder {

std::string_view vfs_op_name(uint8_t op) {
  static constexpr std::string_view names[EZIO_VFS_OP_COUNT] = {
      "",           "vfs_read",      "vfs_write",      "vfs_readv",
      "vfs_writev", "vfs_iter_read", "vfs_iter_write", "vfs_fsync_range",
      "vfs_open"};
  return op < EZIO_VFS_OP_COUNT ? names[op] : std::string_view();
}

bool fs_bytes_capped(std::string_view syscall) {
  uint8_t op = vfs_op_of_syscall(syscall);
  if (op == EZIO_VFS_READ || op == EZIO_VFS_WRITE || op == EZIO_VFS_READV ||
      op == EZIO_VFS_WRITEV) {
    return true;
  }
  return syscall == "sendfile" || syscall == "splice" || syscall == "copy_file_range";
}

uint8_t vfs_op_of_syscall(std::string_view syscall) {
  // What each syscall calls in fs/read_write.c, fs/sync.c and fs/open.c.
  static constexpr std::pair<std::string_view, uint8_t> map[] = {
      {"read", EZIO_VFS_READ},         {"pread64", EZIO_VFS_READ},
      {"write", EZIO_VFS_WRITE},       {"pwrite64", EZIO_VFS_WRITE},
      {"readv", EZIO_VFS_READV},       {"preadv", EZIO_VFS_READV},
      {"preadv2", EZIO_VFS_READV},     {"writev", EZIO_VFS_WRITEV},
      {"pwritev", EZIO_VFS_WRITEV},    {"pwritev2", EZIO_VFS_WRITEV},
      {"fsync", EZIO_VFS_FSYNC_RANGE}, {"fdatasync", EZIO_VFS_FSYNC_RANGE},
      {"open", EZIO_VFS_OPEN},         {"openat", EZIO_VFS_OPEN},
      {"openat2", EZIO_VFS_OPEN},      {"creat", EZIO_VFS_OPEN},
  };
  for (const auto& [name, op] : map) {
    if (name == syscall) return op;
  }
  return EZIO_VFS_NONE;
}

bool vfs_op_reads(uint8_t op) {
  return op == EZIO_VFS_READ || op == EZIO_VFS_READV || op == EZIO_VFS_ITER_READ;
}
bool vfs_op_writes(uint8_t op) {
  return op == EZIO_VFS_WRITE || op == EZIO_VFS_WRITEV || op == EZIO_VFS_ITER_WRITE;
}

FilePath file_path(const ezio_file_rec& r) {
  FilePath p;
  unsigned depth = r.depth < EZIO_PATH_DEPTH ? r.depth : EZIO_PATH_DEPTH;
  auto name = [&](unsigned i) {
    return std::string(r.names[i], strnlen(r.names[i], EZIO_NAME_LEN));
  };
  // Components are leaf first; the root's own name ("/") is the last one and is skipped.
  for (unsigned i = depth; i-- > 0;) {
    std::string n = name(i);
    if (n == "/" || n.empty()) continue;
    p.path += "/" + n;
    if (i == r.mount_depth) p.mount_point = p.path;  // names[mount_depth..] are above the mount
  }
  if (p.mount_point.empty()) p.mount_point = "/";
  if (p.path.empty()) p.path = "/";
  p.truncated = r.flags & (EZIO_FILEF_PATH_TRUNCATED | EZIO_FILEF_NAME_TRUNCATED);
  if (r.flags & EZIO_FILEF_PATH_TRUNCATED) p.path = "..." + p.path;
  return p;
}

}  // namespace ezio::recorder
