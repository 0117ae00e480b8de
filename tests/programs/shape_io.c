// SPDX-License-Identifier: GPL-2.0-only
/* One I/O shape of the exactness test (tests/bpf/exactness), run under `eziotrace record`:
 *
 *   shape_io write|read FILE OFFSET LEN COUNT [direct] [append] [vectors=N]
 *
 * COUNT calls of LEN bytes, one after the other from OFFSET (pwrite/pread, or write with append,
 * pwritev/preadv with N vectors sharing LEN), on FILE opened with O_DIRECT if asked; a write is
 * followed by fsync. The calls stop at the first that moves fewer bytes than asked (a full disk,
 * the end of the file). Prints "start=<offset of the first byte> moved=<bytes the calls returned>".
 * Exits non-zero when a call fails before moving anything, unless it is a write on a full disk
 * (ENOSPC, EDQUOT), which the short-write row expects. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#define MAX_VECTORS 16

static void die(const char* what) {
  perror(what);
  exit(2);
}

struct shape {
  int write, direct, append, vectors;
  long long offset, len, count;
};

static void parse(int argc, char** argv, struct shape* s) {
  if (argc < 6) {
    fprintf(stderr, "usage: %s write|read FILE OFFSET LEN COUNT [direct] [append] [vectors=N]\n",
            argv[0]);
    exit(2);
  }
  s->write = !strcmp(argv[1], "write");
  if (!s->write && strcmp(argv[1], "read")) die("mode: write or read");
  s->offset = atoll(argv[3]);
  s->len = atoll(argv[4]);
  s->count = atoll(argv[5]);
  s->vectors = 1;
  for (int i = 6; i < argc; ++i) {
    if (!strcmp(argv[i], "direct")) {
      s->direct = 1;
    } else if (!strcmp(argv[i], "append")) {
      s->append = 1;
    } else if (!strncmp(argv[i], "vectors=", 8)) {
      s->vectors = atoi(argv[i] + 8);
    } else {
      fprintf(stderr, "unknown option %s\n", argv[i]);
      exit(2);
    }
  }
  if (s->vectors < 1 || s->vectors > MAX_VECTORS || s->len < s->vectors) die("vectors");
}

/* One call of the shape at offset: its return. */
static ssize_t one_call(const struct shape* s, int fd, char* buf, long long offset) {
  if (s->append) return write(fd, buf, s->len);
  if (s->vectors == 1) {
    return s->write ? pwrite(fd, buf, s->len, offset) : pread(fd, buf, s->len, offset);
  }
  struct iovec iov[MAX_VECTORS];
  long long part = s->len / s->vectors, given = 0;
  for (int i = 0; i < s->vectors; ++i) {
    iov[i].iov_base = buf + given;
    iov[i].iov_len = i == s->vectors - 1 ? s->len - given : part;
    given += iov[i].iov_len;
  }
  return s->write ? pwritev(fd, iov, s->vectors, offset) : preadv(fd, iov, s->vectors, offset);
}

int main(int argc, char** argv) {
  struct shape s = {0};
  parse(argc, argv, &s);
  int flags = s.write ? O_WRONLY | O_CREAT : O_RDONLY;
  if (s.direct) flags |= O_DIRECT;
  if (s.append) flags |= O_APPEND;
  int fd = open(argv[2], flags, 0644);
  if (fd < 0) die("open");
  char* buf;
  if (posix_memalign((void**)&buf, 4096, s.len)) die("posix_memalign");
  memset(buf, 'x', s.len);
  long long start = s.offset;
  if (s.append) {
    struct stat st;
    if (fstat(fd, &st)) die("fstat");
    start = st.st_size;
  }
  long long moved = 0;
  for (long long i = 0; i < s.count; ++i) {
    ssize_t n = one_call(&s, fd, buf, s.offset + i * s.len);
    if (n < 0 && s.write && (errno == ENOSPC || errno == EDQUOT)) break;
    if (n < 0) die(s.write ? "write" : "read");
    moved += n;
    if (n < s.len) break;
  }
  if (s.write && fsync(fd) && errno != ENOSPC) die("fsync");
  close(fd);
  printf("start=%lld moved=%lld\n", start, moved);
  return 0;
}
