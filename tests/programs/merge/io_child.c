// SPDX-License-Identifier: GPL-2.0-only
/* The program io_threads' spawner thread execs:  io_child FILE
 * (what it does: io_threads.h) */
#define _GNU_SOURCE
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "io_threads.h"

int main(int argc, char** argv) {
  if (argc != 2) return 1;
  static char buf[CHILD_TOTAL];
  memset(buf, 'c', sizeof buf);
  int fd = open(argv[1], O_CREAT | O_WRONLY | O_TRUNC, 0644);
  if (fd < 0) return 2;
  for (int i = 0; i < CHILD_WRITES; i++) {
    if (write(fd, buf + CHILD_BYTES * i, CHILD_BYTES) != CHILD_BYTES) return 3;
  }
  if (pwrite(fd, buf, CHILD_BYTES, CHILD_WRITES * CHILD_BYTES) != CHILD_BYTES) return 4;
  if (close(fd) != 0) return 5;
  fd = open(argv[1], O_RDONLY);
  if (fd < 0) return 6;
  if (pread(fd, buf, CHILD_TOTAL, 0) != CHILD_TOTAL) return 7;
  if (read(fd, buf, CHILD_TOTAL) != CHILD_TOTAL) return 8;
  if (close(fd) != 0) return 9;
  return 0;
}
