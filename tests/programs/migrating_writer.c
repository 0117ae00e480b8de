// SPDX-License-Identifier: GPL-2.0-only
// Writes one byte `count` times to a file, moving itself to the next online CPU before each write
// (sched_setaffinity): one thread whose records land in every CPU's ring buffer, for the test
// that the archive still holds them all, in time order (tests/bpf/recorder/per_cpu_rings_test.cpp).
// Prints "tid=<tid> cpus=<CPUs it ran on>".
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: migrating_writer FILE COUNT\n");
    return 2;
  }
  int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    perror("open");
    return 1;
  }
  long count = strtol(argv[2], NULL, 10);
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  cpu_set_t seen;
  CPU_ZERO(&seen);
  for (long i = 0; i < count; ++i) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET((int)(i % cpus), &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0) {
      perror("sched_setaffinity");
      return 1;
    }
    CPU_SET(sched_getcpu(), &seen);
    if (write(fd, "x", 1) != 1) {
      perror("write");
      return 1;
    }
  }
  close(fd);
  printf("tid=%d cpus=%d\n", (int)gettid(), CPU_COUNT(&seen));
  return 0;
}
