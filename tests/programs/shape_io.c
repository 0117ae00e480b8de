// SPDX-License-Identifier: GPL-2.0-only
/* One I/O shape of the exactness test (tests/bpf/exactness), run under `eziotrace record`:
 *
 *   shape_io write|read FILE OFFSET LEN COUNT [direct] [append] [vectors=N] [via=CALL]
 *
 * COUNT calls of LEN bytes, one after the other from OFFSET (pwrite/pread, or write with append,
 * pwritev/preadv with N vectors sharing LEN), on FILE opened with O_DIRECT if asked; a write is
 * followed by fsync; then syncfs. via= moves the bytes with another call instead: sendfile or splice (through a
 * pipe: LEN up to its 64 KiB), between FILE and a memfd (shared memory: no block device, no page
 * dirtied) that holds LEN bytes, or receives them; the call's return is what it moved on FILE. The
 * calls stop at the first that moves fewer bytes than asked (a full disk, the end of the file).
 * Prints "start=<offset of the first byte> moved=<bytes the calls returned>". Exits non-zero when a
 * call fails before moving anything, unless it is a write on a full disk (ENOSPC, EDQUOT), which
 * the short-write row expects. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
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
  const char* via; /* NULL: pwrite/pread (write with append, pwritev/preadv with vectors) */
  int other;       /* via: the memfd at the other end */
  int pipe[2];     /* via=splice */
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
    } else if (!strncmp(argv[i], "via=", 4)) {
      s->via = argv[i] + 4;
    } else if (!strncmp(argv[i], "vectors=", 8)) {
      s->vectors = atoi(argv[i] + 8);
    } else {
      fprintf(stderr, "unknown option %s\n", argv[i]);
      exit(2);
    }
  }
  if (s->vectors < 1 || s->vectors > MAX_VECTORS || s->len < s->vectors) die("vectors");
}

/* The memfd at the other end of via= calls: LEN bytes to copy into FILE, or room for them. */
static void open_other(struct shape* s, const char* buf) {
  s->other = memfd_create("shape_io", 0);
  if (s->other < 0) die("memfd_create");
  if (s->write && write(s->other, buf, s->len) != s->len) die("memfd write");
  if (!strcmp(s->via, "splice") && pipe(s->pipe)) die("pipe");
}

/* A splice of len bytes at offset of FILE, through the pipe: the second splice's return. */
static ssize_t splice_call(const struct shape* s, int fd, long long offset) {
  loff_t file_off = offset, other_off = 0;
  int in = s->write ? s->other : fd, out = s->write ? fd : s->other;
  loff_t* in_off = s->write ? &other_off : &file_off;
  loff_t* out_off = s->write ? &file_off : &other_off;
  ssize_t n = splice(in, in_off, s->pipe[1], NULL, s->len, 0);
  if (n <= 0) return n;
  return splice(s->pipe[0], NULL, out, out_off, n, 0);
}

/* One call of via=: FILE at offset is written from the memfd or read into it. */
static ssize_t via_call(const struct shape* s, int fd, long long offset) {
  loff_t file_off = offset, other_off = 0;
  if (!strcmp(s->via, "splice")) return splice_call(s, fd, offset);
  if (!strcmp(s->via, "sendfile")) {
    if (s->write) { /* sendfile writes at the file's position */
      if (lseek(fd, offset, SEEK_SET) != offset) die("lseek");
      return sendfile(fd, s->other, &other_off, s->len);
    }
    if (lseek(s->other, 0, SEEK_SET)) die("lseek");
    return sendfile(s->other, fd, &file_off, s->len);
  }
  fprintf(stderr, "unknown via=%s\n", s->via);
  exit(2);
}

/* One call of the shape at offset: its return. */
static ssize_t one_call(const struct shape* s, int fd, char* buf, long long offset) {
  if (s->via) return via_call(s, fd, offset);
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
  if (s.via) open_other(&s, buf);
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
  /* What the calls left for later (a journal commit for the access time of a read, ext4's
   * metadata) is written now, while the recording runs: the device's counters then hold nothing
   * the recording could not see. */
  if (syncfs(fd) && errno != ENOSPC) die("syncfs");
  close(fd);
  printf("start=%lld moved=%lld\n", start, moved);
  return 0;
}
