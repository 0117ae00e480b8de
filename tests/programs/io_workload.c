// SPDX-License-Identifier: GPL-2.0-only
/* The I/O patterns of the kernel-layer tests, one per mode, run under `eziotrace record`.
 * Prints "tid=<tid>" (the thread that did the I/O) and, for the modes that measure the device,
 * "stat_ios=<n>" and "stat_sectors=<n>": requests and sectors /sys/block/<dev>/stat counted while
 * the I/O ran, read from inside the recording so the window matches the trace's. Exits non-zero
 * on any failure. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static void die(const char* what) {
  perror(what);
  exit(2);
}

/* The fields of /sys/block/DEV/stat (Documentation/block/stat.rst): v[0] reads, v[4] writes,
 * v[11] discards, v[15] flushes completed. */
static void device_stat(const char* dev, unsigned long long v[17]) {
  char path[256];
  snprintf(path, sizeof(path), "/sys/block/%s/stat", dev);
  FILE* f = fopen(path, "r");
  if (!f) die(path);
  int n = 0;
  for (int i = 0; i < 17; ++i) v[i] = 0;
  while (n < 17 && fscanf(f, "%llu", &v[n]) == 1) ++n;
  fclose(f);
  if (n < 17) die("short /sys/block stat (a kernel before 5.5?)");
}

/* Completed requests of all kinds: reads, writes, discards, flushes. */
static unsigned long long device_ios(const char* dev) {
  unsigned long long v[17];
  device_stat(dev, v);
  return v[0] + v[4] + v[11] + v[15];
}

/* Sectors read, written and discarded. */
static unsigned long long device_sectors(const char* dev) {
  unsigned long long v[17];
  device_stat(dev, v);
  return v[2] + v[6] + v[13];
}

/* The chdir test: opens relative to a working directory it changed, and relative to a directory
 * descriptor. Creates DIR/sub/a, DIR/b and DIR/sub/c. */
static void chdir_open(const char* dir) {
  char sub[4096];
  snprintf(sub, sizeof(sub), "%s/sub", dir);
  if (mkdir(sub, 0755) && errno != EEXIST) die("mkdir");
  if (chdir(sub)) die("chdir");
  int fd = open("a", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || write(fd, "a", 1) != 1) die("a");
  close(fd);
  int dirfd = open(dir, O_RDONLY | O_DIRECTORY);
  if (dirfd < 0) die("open dir");
  fd = openat(dirfd, "b", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || write(fd, "b", 1) != 1) die("b");
  close(fd);
  close(dirfd);
  if (chdir("..")) die("chdir ..");
  fd = open("sub/c", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || write(fd, "c", 1) != 1) die("c");
  close(fd);
}

static void* aligned_buffer(size_t bytes, int fill) {
  void* buf;
  if (posix_memalign(&buf, 4096, bytes)) die("posix_memalign");
  memset(buf, fill, bytes);
  return buf;
}

/* Opens file and reads count blocks of bs bytes from its start; returns the open descriptor. */
static int read_blocks(const char* file, size_t bs, long count) {
  int fd = open(file, O_RDONLY);
  if (fd < 0) die("open");
  void* buf = aligned_buffer(bs, 0);
  for (long i = 0; i < count; ++i) {
    if (read(fd, buf, bs) != (ssize_t)bs) die("read");
  }
  free(buf);
  return fd;
}

int main(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr,
            "usage: %s "
            "odirect|odirect-amid-noise|odirect-forever|odirect-rw|fdatasync-clean|chdir-open|"
            "metadata-storm|buffered-fsync|buffered-syncfs|read|mmap-read|drop|pin FILE "
            "COUNT [DEV]\n"
            "       %s write-wait-sync FILE BYTES GO\n",
            argv[0], argv[0]);
    return 2;
  }
  const char* mode = argv[1];
  const char* file = argv[2];
  long count = atol(argv[3]);
  const int waits = !strcmp(mode, "write-wait-sync");
  const char* dev = argc > 4 && !waits ? argv[4] : NULL;
  const size_t bs = 64 * 1024;
  unsigned long long before = dev ? device_ios(dev) : 0;
  unsigned long long sectors_before = dev ? device_sectors(dev) : 0;

  if (!strcmp(mode, "odirect") || !strcmp(mode, "odirect-amid-noise")) {
    int fd = open(file, O_WRONLY | O_DIRECT);
    if (fd < 0) die("open O_DIRECT");
    void* buf = aligned_buffer(bs, 'd');
    for (long i = 0; i < count; ++i) {
      if (pwrite(fd, buf, bs, i * bs) != (ssize_t)bs) die("pwrite");
    }
    close(fd);
    /* Amid noise: stays until the device has counted requests of someone else, so that the
     * recording surely overlaps the other process's I/O (on a busy machine a few milliseconds of
     * writes may not). Gives up after 10 s; stat_ios then says no noise was seen. */
    for (int i = 0; dev && !strcmp(mode, "odirect-amid-noise") && i < 10000; ++i) {
      if (device_ios(dev) - before > (unsigned long long)count) break;
      usleep(1000);
    }
  } else if (!strcmp(mode, "odirect-forever")) {
    /* The unrelated process of the isolation test: rewrites COUNT blocks until killed, one process
     * issuing requests all the time (a shell loop of dd leaves gaps at each exec). */
    int fd = open(file, O_WRONLY | O_CREAT | O_DIRECT, 0644);
    if (fd < 0) die("open O_DIRECT");
    void* buf = aligned_buffer(bs, 'n');
    for (long i = 0;; ++i) {
      if (pwrite(fd, buf, bs, (i % count) * bs) != (ssize_t)bs) die("pwrite");
    }
  } else if (!strcmp(mode, "odirect-rw")) {
    /* COUNT direct writes, then COUNT direct reads of them. */
    int fd = open(file, O_RDWR | O_CREAT | O_DIRECT, 0644);
    if (fd < 0) die("open O_DIRECT");
    void* buf = aligned_buffer(bs, 'r');
    for (long i = 0; i < count; ++i) {
      if (pwrite(fd, buf, bs, i * bs) != (ssize_t)bs) die("pwrite");
    }
    for (long i = 0; i < count; ++i) {
      if (pread(fd, buf, bs, i * bs) != (ssize_t)bs) die("pread");
    }
    close(fd);
  } else if (!strcmp(mode, "fdatasync-clean")) {
    /* COUNT fdatasync of a file with nothing dirty: each is an empty PREFLUSH request only. Prints
     * the device's counters of writes, written sectors and flushes over the calls. */
    int fd = open(file, O_RDWR);
    if (fd < 0) die("open");
    if (fdatasync(fd)) die("fdatasync");
    unsigned long long a[17], b[17];
    if (dev) device_stat(dev, a);
    for (long i = 0; i < count; ++i) {
      if (fdatasync(fd)) die("fdatasync");
    }
    if (dev) {
      device_stat(dev, b);
      printf("stat_writes=%llu\nstat_write_sectors=%llu\nstat_flushes=%llu\n", b[4] - a[4],
             b[6] - a[6], b[15] - a[15]);
    }
    close(fd);
  } else if (!strcmp(mode, "chdir-open")) {
    chdir_open(file);
  } else if (!strcmp(mode, "metadata-storm")) {
    /* The bystander of the attribution test: creates COUNT empty files in directory FILE, syncs,
     * removes them, syncs (that file system only), until killed; says "storming" after its first
     * round. Only metadata: bitmaps, inode tables and directory blocks, in the device's own page
     * cache. */
    char path[4096];
    int dirfd = open(file, O_RDONLY | O_DIRECTORY);
    if (dirfd < 0) die("open dir");
    for (long round = 0;; ++round) {
      for (long i = 0; i < count; ++i) {
        snprintf(path, sizeof(path), "%s/f%ld", file, i);
        int fd = open(path, O_WRONLY | O_CREAT, 0644);
        if (fd < 0) die("create");
        close(fd);
      }
      if (syncfs(dirfd)) die("syncfs");
      for (long i = 0; i < count; ++i) {
        snprintf(path, sizeof(path), "%s/f%ld", file, i);
        if (unlink(path)) die("unlink");
      }
      if (syncfs(dirfd)) die("syncfs");
      if (round == 0) {
        printf("storming\n");
        fflush(stdout);
      }
    }
  } else if (!strcmp(mode, "buffered-fsync") || !strcmp(mode, "buffered-syncfs")) {
    int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) die("open");
    void* buf = aligned_buffer(bs, 'b');
    for (long i = 0; i < count; ++i) {
      if (write(fd, buf, bs) != (ssize_t)bs) die("write");
    }
    /* syncfs hands the writeback to the flusher kworker and waits: a kernel thread submits. */
    if (!strcmp(mode, "buffered-fsync") ? fsync(fd) : syncfs(fd)) die("sync");
    close(fd);
  } else if (waits) {
    /* The target of the shared-request test: writes BYTES into FILE, waits until the file GO
     * exists (the test makes it once a bystander has written its files), then sync(): one
     * writeback by the flusher of both processes' files, whose bios it merges. */
    if (argc < 5) die("write-wait-sync needs GO");
    int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) die("open");
    void* buf = aligned_buffer(count, 't');
    if (write(fd, buf, count) != (ssize_t)count) die("write");
    close(fd);
    int tries = 0;
    for (; access(argv[4], F_OK) && tries < 60000; ++tries) usleep(1000);
    if (tries == 60000) die("waiting for GO");
    sync();
  } else if (!strcmp(mode, "read")) {
    close(read_blocks(file, bs, count));
  } else if (!strcmp(mode, "drop")) {
    /* Write back and drop the file's pages, so the next read is cold. */
    int fd = open(file, O_RDONLY);
    if (fd < 0) die("open");
    if (fdatasync(fd)) die("fdatasync");
    if (posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED)) die("posix_fadvise");
    close(fd);
  } else if (!strcmp(mode, "read-until-evicted")) {
    /* Reads the file into the cache, then waits (up to 20 s) until someone else has evicted all
     * of it: the test drops it from another, untraced, process. */
    int fd = read_blocks(file, bs, count);
    size_t len = count * bs;
    void* p = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) die("mmap");
    unsigned char* vec = malloc(len / 4096 + 1);
    long resident = 1;
    for (int tries = 0; resident && tries < 2000; ++tries) {
      if (mincore(p, len, vec)) die("mincore");
      resident = 0;
      for (size_t i = 0; i < len / 4096; ++i) resident += vec[i] & 1;
      if (resident) usleep(10000);
    }
    printf("resident=%ld\n", resident);
    munmap(p, len);
    close(fd);
  } else if (!strcmp(mode, "pin")) {
    /* Holds count blocks of the file in the page cache (mlock) until killed, saying "pinned" once
     * they are: a machine may reclaim page-cache pages it judges cold at any moment (DAMON's
     * pageout on the development VMs), and a test of warm reads must not rest on luck. */
    int fd = open(file, O_RDONLY);
    if (fd < 0) die("open");
    size_t len = count * bs;
    void* p = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) die("mmap");
    if (mlock(p, len)) die("mlock");
    printf("pinned\n");
    fflush(stdout);
    for (;;) pause();
  } else if (!strcmp(mode, "mmap-read")) {
    int fd = open(file, O_RDONLY);
    if (fd < 0) die("open");
    size_t len = count * bs;
    volatile unsigned char* p = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) die("mmap");
    unsigned long sum = 0;
    for (size_t off = 0; off < len; off += 4096) sum += p[off];
    printf("sum=%lu\n", sum);
    munmap((void*)p, len);
    close(fd);
  } else {
    fprintf(stderr, "unknown mode %s\n", mode);
    return 2;
  }
  if (dev) {
    printf("stat_ios=%llu\nstat_sectors=%llu\n", device_ios(dev) - before,
           device_sectors(dev) - sectors_before);
  }
  printf("tid=%ld\n", (long)syscall(SYS_gettid));
  return 0;
}
