// SPDX-License-Identifier: GPL-2.0-only
/* Workloads that each trigger one `eziotrace advise` rule (tests/e2e/report/report_test.cpp), and
 * one well-behaved workload that triggers none.
 *   advise_workload MODE DIR
 * MODE: good, small, small-direct, random, misaligned, fsync, metadata, reopen, stdio,
 * threads, throttle, readahead, saturate. The last three need the device set up by the test
 * (tests/e2e/report/report_test.cpp, DeviceRuleTest): a dirty-page limit on its BDI, a large
 * read_ahead_kb, a scheduler queueing requests. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char* dir;
static char path_buf[4096];

static const char* path(const char* name) {
  snprintf(path_buf, sizeof(path_buf), "%s/%s", dir, name);
  return path_buf;
}

static void die(const char* what) {
  perror(what);
  exit(3);
}

static int open_or_die(const char* p, int flags) {
  int fd = open(p, flags, 0644);
  if (fd < 0) die(p);
  return fd;
}

static void* aligned(size_t n) {
  void* b = NULL;
  if (posix_memalign(&b, 4096, n)) die("posix_memalign");
  memset(b, 'x', n);
  return b;
}

/* A file of `mib` MiB written in 1 MiB writes, synced, then dropped from the page cache so that
 * the next accesses go to the device. */
static void cold_file(const char* p, int mib) {
  int fd = open_or_die(p, O_WRONLY | O_CREAT | O_TRUNC);
  char* b = aligned(1 << 20);
  for (int i = 0; i < mib; i++)
    if (write(fd, b, 1 << 20) != 1 << 20) die("write");
  fsync(fd);
  posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  close(fd);
  free(b);
}

/* Large sequential writes, one sync at the end, then a sequential read back: no rule applies. */
static void good(void) {
  int fd = open_or_die(path("good.dat"), O_RDWR | O_CREAT | O_TRUNC);
  char* b = aligned(1 << 20);
  for (int i = 0; i < 32; i++)
    if (write(fd, b, 1 << 20) != 1 << 20) die("write");
  lseek(fd, 0, SEEK_SET);
  for (int i = 0; i < 32; i++)
    if (read(fd, b, 1 << 20) != 1 << 20) die("read");
  close(fd);
  free(b);
}

/* 20 000 writes of 100 bytes: the page cache absorbs them. */
static void small(void) {
  int fd = open_or_die(path("small.dat"), O_WRONLY | O_CREAT | O_TRUNC);
  char b[100];
  memset(b, 's', sizeof(b));
  for (int i = 0; i < 20000; i++)
    if (write(fd, b, sizeof(b)) != (ssize_t)sizeof(b)) die("write");
  close(fd);
}

/* 4 KiB O_DIRECT writes: each reaches the device as a 4 KiB request. */
static void small_direct(void) {
  int fd = open_or_die(path("direct.dat"), O_WRONLY | O_CREAT | O_TRUNC | O_DIRECT);
  char* b = aligned(4096);
  for (int i = 0; i < 3000; i++)
    if (write(fd, b, 4096) != 4096) die("write");
  close(fd);
  free(b);
}

/* 4 KiB reads at random offsets of a cold 64 MiB file. */
static void random_reads(void) {
  cold_file(path("random.dat"), 64);
  int fd = open_or_die(path("random.dat"), O_RDONLY);
  char* b = aligned(4096);
  srand(7);
  for (int i = 0; i < 3000; i++) {
    off_t off = (off_t)(rand() % (64 * 256)) * 4096;
    if (pread(fd, b, 4096, off) != 4096) die("pread");
  }
  close(fd);
  free(b);
}

/* 100-byte writes in the middle of pages of a cold file: each page is read before it is changed. */
static void misaligned(void) {
  cold_file(path("rmw.dat"), 16);
  int fd = open_or_die(path("rmw.dat"), O_WRONLY);
  char b[100];
  memset(b, 'm', sizeof(b));
  for (int i = 0; i < 16 * 256; i += 2) {
    if (pwrite(fd, b, sizeof(b), (off_t)i * 4096 + 1000) != (ssize_t)sizeof(b)) die("pwrite");
  }
  close(fd);
}

/* One fdatasync per 4 KiB record. */
static void fsyncs(void) {
  int fd = open_or_die(path("log.dat"), O_WRONLY | O_CREAT | O_TRUNC);
  char b[4096];
  memset(b, 'f', sizeof(b));
  for (int i = 0; i < 300; i++) {
    if (write(fd, b, sizeof(b)) != (ssize_t)sizeof(b)) die("write");
    fdatasync(fd);
  }
  close(fd);
}

/* stat, open and close of 200 files, 30 rounds. */
static void metadata(void) {
  char name[64];
  for (int i = 0; i < 200; i++) {
    snprintf(name, sizeof(name), "meta-%d", i);
    close(open_or_die(path(name), O_WRONLY | O_CREAT | O_TRUNC));
  }
  struct stat st;
  for (int round = 0; round < 30; round++) {
    for (int i = 0; i < 200; i++) {
      snprintf(name, sizeof(name), "meta-%d", i);
      if (stat(path(name), &st) != 0) die("stat");
      close(open_or_die(path(name), O_RDONLY));
    }
  }
}

/* The same file opened, appended to and closed 500 times. */
static void reopen(void) {
  char b[1 << 16];
  memset(b, 'r', sizeof(b));
  for (int i = 0; i < 500; i++) {
    int fd = open_or_die(path("reopen.dat"), O_WRONLY | O_CREAT | O_APPEND);
    if (write(fd, b, sizeof(b)) != (ssize_t)sizeof(b)) die("write");
    close(fd);
  }
}

/* fwrite of 8 KiB records through stdio's 4 KiB buffer: each fwrite becomes a write. */
static void stdio_passthrough(void) {
  FILE* f = fopen(path("stdio.dat"), "w");
  if (!f) die("fopen");
  setvbuf(f, NULL, _IOFBF, 4096);
  static char b[8192];
  memset(b, 'p', sizeof(b));
  for (int i = 0; i < 3000; i++)
    if (fwrite(b, 1, sizeof(b), f) != sizeof(b)) die("fwrite");
  fclose(f);
}

/* Eight threads writing 64 KiB O_DIRECT records to their own file on the same device at once. They
 * start their writes together (a barrier): a thread created late could otherwise write most of its
 * records alone, waiting for nobody, and the interference the rule looks for would depend on how
 * the scheduler ordered the threads' start. */
static pthread_barrier_t writers_ready;

static void* direct_writer(void* arg) {
  char name[PATH_MAX];
  snprintf(name, sizeof(name), "%s/thread-%ld.dat", dir, (long)arg);
  int fd = open_or_die(name, O_WRONLY | O_CREAT | O_TRUNC | O_DIRECT);
  char* b = aligned(1 << 16);
  pthread_barrier_wait(&writers_ready);
  for (int i = 0; i < 400; i++)
    if (write(fd, b, 1 << 16) != 1 << 16) die("write");
  close(fd);
  free(b);
  return NULL;
}

static void threads(void) {
  pthread_t t[8];
  pthread_barrier_init(&writers_ready, NULL, 8);
  for (long i = 0; i < 8; i++) pthread_create(&t[i], NULL, direct_writer, (void*)i);
  for (int i = 0; i < 8; i++) pthread_join(t[i], NULL);
  pthread_barrier_destroy(&writers_ready);
}

/* 96 MiB of buffered 1 MiB writes, as fast as the page cache takes them: with the device's BDI
 * limited to a few MiB of dirty pages (strict_limit), the kernel makes the writer wait for the
 * write-back in balance_dirty_pages. */
static void throttle(void) {
  int fd = open_or_die(path("throttle.dat"), O_WRONLY | O_CREAT | O_TRUNC);
  char* b = aligned(1 << 20);
  for (int i = 0; i < 96; i++)
    if (write(fd, b, 1 << 20) != 1 << 20) die("write");
  close(fd);
  unlink(path("throttle.dat"));
  free(b);
}

/* The first 256 KiB of every 8 MiB of a cold 128 MiB file, read sequentially in 64 KiB reads with
 * POSIX_FADV_SEQUENTIAL: each burst ramps the kernel's readahead window up (to megabytes with a
 * large read_ahead_kb), and what it read beyond the burst is never used. */
static void readahead_bursts(void) {
  cold_file(path("bursts.dat"), 128);
  int fd = open_or_die(path("bursts.dat"), O_RDONLY);
  posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  char* b = aligned(1 << 16);
  for (off_t region = 0; region < 16; region++) {
    for (off_t k = 0; k < 4; k++) {
      off_t off = region * (8 << 20) + k * (1 << 16);
      if (pread(fd, b, 1 << 16, off) != 1 << 16) die("pread");
    }
  }
  close(fd);
  unlink(path("bursts.dat"));
  free(b);
}

/* sat-N.dat: 4 MiB written and synced, to be read back with O_DIRECT. */
static void prepare_sat(long n) {
  char name[PATH_MAX];
  snprintf(name, sizeof(name), "%s/sat-%ld.dat", dir, n);
  int fd = open_or_die(name, O_WRONLY | O_CREAT | O_TRUNC);
  char* b = aligned(1 << 20);
  for (int i = 0; i < 4; i++)
    if (write(fd, b, 1 << 20) != 1 << 20) die("write");
  fsync(fd);
  close(fd);
  free(b);
}

/* `count` 64 KiB O_DIRECT reads of sat-N.dat, round and round its 4 MiB. */
static void direct_reads(long n, int count) {
  char name[PATH_MAX];
  snprintf(name, sizeof(name), "%s/sat-%ld.dat", dir, n);
  int fd = open_or_die(name, O_RDONLY | O_DIRECT);
  char* b = aligned(1 << 16);
  for (int i = 0; i < count; i++)
    if (pread(fd, b, 1 << 16, (off_t)(i % 64) << 16) != 1 << 16) die("pread");
  close(fd);
  free(b);
}

enum { kCrowd = 32 };
static pthread_barrier_t crowd_start;

static void* crowd_reader(void* arg) {
  pthread_barrier_wait(&crowd_start); /* all at once: the device sees the whole crowd */
  direct_reads((long)arg, 150);
  return NULL;
}

/* 64 KiB O_DIRECT reads, first one at a time (each request alone on the device), then from 32
 * threads at once. With a scheduler that hands the device one request at a time (the test sets
 * bfq with strict_guarantees) the crowd's requests wait in its queue. Reads: bfq limits how many
 * write requests may wait (fewer still while it favours new queues), not sync reads. */
static void saturate(void) {
  char name[64];
  for (long i = 0; i < kCrowd; i++) prepare_sat(i);
  prepare_sat(99);
  direct_reads(99, 300);
  pthread_t t[kCrowd];
  pthread_barrier_init(&crowd_start, NULL, kCrowd);
  for (long i = 0; i < kCrowd; i++) pthread_create(&t[i], NULL, crowd_reader, (void*)i);
  for (int i = 0; i < kCrowd; i++) pthread_join(t[i], NULL);
  pthread_barrier_destroy(&crowd_start);
  for (long i = 0; i < kCrowd; i++) {
    snprintf(name, sizeof(name), "sat-%ld.dat", i);
    unlink(path(name));
  }
  unlink(path("sat-99.dat"));
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s MODE DIR\n", argv[0]);
    return 2;
  }
  dir = argv[2];
  static const struct {
    const char* name;
    void (*run)(void);
  } modes[] = {
      {"good", good},           {"small", small},           {"small-direct", small_direct},
      {"random", random_reads}, {"misaligned", misaligned}, {"fsync", fsyncs},
      {"metadata", metadata},   {"reopen", reopen},         {"stdio", stdio_passthrough},
      {"threads", threads},     {"throttle", throttle},     {"readahead", readahead_bursts},
      {"saturate", saturate}};
  for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
    if (strcmp(argv[1], modes[i].name) == 0) {
      modes[i].run();
      return 0;
    }
  }
  fprintf(stderr, "unknown mode %s\n", argv[1]);
  return 2;
}
