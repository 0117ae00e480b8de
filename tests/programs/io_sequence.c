// SPDX-License-Identifier: GPL-2.0-only
/* A known I/O sequence for the recorder's integration tests.
 *   io_sequence DATA_FILE CHILD_PROGRAM CHILD_FILE
 * Main thread: open DATA_FILE, 100 x 64 KiB writes, fsync, 10 x 4 KiB preads at offsets
 * i * 65536 + 512, close. A second thread opens DATA_FILE and does 5 x 4 KiB reads. A forked
 * child execs CHILD_PROGRAM CHILD_FILE. Prints "main=<tid> reader=<tid> child=<pid>". */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char* data_file;
static pid_t reader_tid;

static void* reader(void* arg) {
  (void)arg;
  reader_tid = gettid();
  static char buf[4096];
  int fd = open(data_file, O_RDONLY);
  if (fd < 0) exit(3);
  for (int i = 0; i < 5; i++) {
    if (read(fd, buf, sizeof(buf)) != sizeof(buf)) exit(4);
  }
  close(fd);
  return NULL;
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s DATA_FILE CHILD_PROGRAM CHILD_FILE\n", argv[0]);
    return 2;
  }
  data_file = argv[1];
  static char block[65536];
  memset(block, 'e', sizeof(block));
  int fd = open(data_file, O_CREAT | O_RDWR | O_TRUNC, 0644);
  if (fd < 0) return 3;
  for (int i = 0; i < 100; i++) {
    if (write(fd, block, sizeof(block)) != sizeof(block)) return 4;
  }
  if (fsync(fd) != 0) return 5;
  for (int i = 0; i < 10; i++) {
    if (pread(fd, block, 4096, (off_t)i * 65536 + 512) != 4096) return 6;
  }
  close(fd);

  pthread_t t;
  pthread_create(&t, NULL, reader, NULL);
  pthread_join(t, NULL);

  pid_t child = fork();
  if (child == 0) {
    execl(argv[2], argv[2], argv[3], (char*)NULL);
    _exit(127);
  }
  int status = 0;
  waitpid(child, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return 7;
  printf("main=%d reader=%d child=%d\n", gettid(), reader_tid, child);
  return 0;
}
