// SPDX-License-Identifier: GPL-2.0-only
/* A write() that makes no system call, linked into nosyscall_write ahead of libc: EZTrace's
 * wrapper (found first, preloaded) calls it as "the real write", so the user-level write has no
 * write system call inside it, which the merge counts as an alignment violation. */
#include <sys/types.h>

ssize_t write(int fd, const void* buf, size_t n) {
  (void)fd;
  (void)buf;
  return (ssize_t)n;
}
