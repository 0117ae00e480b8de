// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/core/syscall_table.h"

#include <sys/syscall.h>

#include <array>

namespace ezio::recorder {
namespace {

constexpr uint8_t N = EZIO_NO_ARG;

// Descriptor fields: cls, fd, count, offset, extra, path, flags, mode (argument indexes).
constexpr ezio_sc_desc plain(uint8_t fd, uint8_t count = N, uint8_t offset = N, uint8_t extra = N) {
  return {EZIO_SC_PLAIN, fd, count, offset, extra, N, N, N};
}
constexpr ezio_sc_desc vector(uint8_t offset = N, uint8_t extra = N) {
  return {EZIO_SC_VECTOR, 0, 2, offset, extra, N, N, N};
}
constexpr ezio_sc_desc open_call(uint8_t dirfd, uint8_t path, uint8_t flags, uint8_t mode,
                                 uint8_t extra = N) {
  return {EZIO_SC_OPEN, dirfd, N, N, extra, path, flags, mode};
}

constexpr std::array kTable = {
    SyscallInfo{SYS_read, "read", IoKind::Read, plain(0, 2)},
    SyscallInfo{SYS_write, "write", IoKind::Write, plain(0, 2)},
    SyscallInfo{SYS_pread64, "pread64", IoKind::Read, plain(0, 2, 3)},
    SyscallInfo{SYS_pwrite64, "pwrite64", IoKind::Write, plain(0, 2, 3)},
    SyscallInfo{SYS_readv, "readv", IoKind::Read, vector()},
    SyscallInfo{SYS_writev, "writev", IoKind::Write, vector()},
    SyscallInfo{SYS_preadv, "preadv", IoKind::Read, vector(3)},
    SyscallInfo{SYS_pwritev, "pwritev", IoKind::Write, vector(3)},
    SyscallInfo{SYS_preadv2, "preadv2", IoKind::Read, vector(3, 5)},
    SyscallInfo{SYS_pwritev2, "pwritev2", IoKind::Write, vector(3, 5)},
    SyscallInfo{SYS_open, "open", IoKind::Open, open_call(N, 0, 1, 2)},
    SyscallInfo{SYS_openat, "openat", IoKind::Open, open_call(0, 1, 2, 3)},
    SyscallInfo{SYS_openat2, "openat2", IoKind::Open, open_call(0, 1, N, N, 2)},
    SyscallInfo{SYS_creat, "creat", IoKind::Open, open_call(N, 0, N, 1)},
    SyscallInfo{SYS_close, "close", IoKind::Close, plain(0)},
    SyscallInfo{SYS_lseek, "lseek", IoKind::Seek, plain(0, N, 1, 2)},
    SyscallInfo{SYS_fsync, "fsync", IoKind::Flush, plain(0)},
    SyscallInfo{SYS_fdatasync, "fdatasync", IoKind::Flush, plain(0)},
    SyscallInfo{SYS_sync_file_range, "sync_file_range", IoKind::Flush, plain(0, 2, 1, 3)},
    SyscallInfo{SYS_mmap, "mmap", IoKind::None, plain(4, 1, 5, 3)},
    SyscallInfo{SYS_munmap, "munmap", IoKind::None, plain(N, 1, N, 0)},
    SyscallInfo{SYS_msync, "msync", IoKind::None, plain(N, 1, N, 2)},
    SyscallInfo{SYS_truncate, "truncate", IoKind::None, plain(N, N, 1)},
    SyscallInfo{SYS_ftruncate, "ftruncate", IoKind::None, plain(0, N, 1)},
    SyscallInfo{SYS_fallocate, "fallocate", IoKind::None, plain(0, 3, 2, 1)},
    SyscallInfo{SYS_sendfile, "sendfile", IoKind::None, plain(1, 3, N, 0)},
    SyscallInfo{SYS_copy_file_range, "copy_file_range", IoKind::None, plain(0, 4, N, 2)},
    SyscallInfo{SYS_splice, "splice", IoKind::None, plain(0, 4, N, 2)},
    SyscallInfo{SYS_io_uring_enter, "io_uring_enter", IoKind::None, plain(0, 1, N, 3)},
    // Not I/O, but the fd table must follow them for handles to stay right.
    SyscallInfo{SYS_dup, "dup", IoKind::Dup, plain(0)},
    SyscallInfo{SYS_dup2, "dup2", IoKind::Dup, plain(0, N, N, 1)},
    SyscallInfo{SYS_dup3, "dup3", IoKind::Dup, plain(0, N, N, 1)},
};

}  // namespace

std::span<const SyscallInfo> syscall_table() { return kTable; }

// Asked once per call written: an index by number, not a search of the table.
const SyscallInfo* find_syscall(uint32_t nr) {
  static const auto by_nr = [] {
    std::array<const SyscallInfo*, EZIO_MAX_SYSCALL_NR> index{};
    for (const auto& s : kTable) {
      if (s.nr < index.size()) index[s.nr] = &s;
    }
    return index;
  }();
  return nr < by_nr.size() ? by_nr[nr] : nullptr;
}

}  // namespace ezio::recorder
