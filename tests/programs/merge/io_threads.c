// SPDX-License-Identifier: GPL-2.0-only
/* The merge's workload, recorded by the merge and end-to-end tests:  io_threads DIR CHILD_PROGRAM
 * Three threads, run one after the other (each is joined before the next starts) so that each user
 * call's system calls are unambiguous: stdio, posix, spawner (fork + exec of CHILD_PROGRAM
 * DIR/child.dat, waited for). What each does: io_threads.h. Prints
 * "main=<pid> stdio=<tid> posix=<tid> spawner=<tid> child=<pid>" and exits with
 * IO_THREADS_EXIT_STATUS. */
#define _GNU_SOURCE
#include "io_threads.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char* dir;
static const char* child_program;
static pid_t tids[3];
static pid_t child;

static void path_of(char* out, size_t n, const char* name) { snprintf(out, n, "%s/%s", dir, name); }

static void* stdio_io(void* arg) {
  (void)arg;
  tids[0] = gettid();
  char path[4096];
  static char data[N_FWRITE * FWRITE_BYTES];
  static char wbuf[STDIO_BUF], rbuf[STDIO_BUF];
  path_of(path, sizeof path, "stdio.dat");
  memset(data, 's', sizeof data);
  FILE* f = fopen(path, "w");
  if (!f || setvbuf(f, wbuf, _IOFBF, sizeof wbuf) != 0) exit(20);
  for (int i = 0; i < N_FWRITE; i++) {
    if (fwrite(data + FWRITE_BYTES * i, 1, FWRITE_BYTES, f) != FWRITE_BYTES) exit(21);
  }
  if (fclose(f) != 0) exit(22);
  f = fopen(path, "r");
  if (!f || setvbuf(f, rbuf, _IOFBF, sizeof rbuf) != 0) exit(23);
  for (int i = 0; i < N_FREAD; i++) {
    if (fread(data + FREAD_BYTES * i, 1, FREAD_BYTES, f) != FREAD_BYTES) exit(24);
  }
  if (fclose(f) != 0) exit(25);
  return NULL;
}

static void* posix_io(void* arg) {
  (void)arg;
  tids[1] = gettid();
  char path[4096];
  static char buf[POSIX_BYTES];
  path_of(path, sizeof path, "posix.dat");
  memset(buf, 'p', sizeof buf);
  int fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0644);
  if (fd < 0) exit(30);
  if (write(fd, buf, POSIX_BYTES) != POSIX_BYTES) exit(31);
  if (pwrite(fd, buf, POSIX_BYTES, POSIX_BYTES) != POSIX_BYTES) exit(32);
  if (fsync(fd) != 0) exit(33);
  if (pread(fd, buf, POSIX_BYTES, 0) != POSIX_BYTES) exit(34);
  if (lseek(fd, 0, SEEK_SET) != 0) exit(35);
  if (read(fd, buf, POSIX_BYTES) != POSIX_BYTES) exit(36);
  if (close(fd) != 0) exit(37);
  return NULL;
}

static void* spawner(void* arg) {
  (void)arg;
  tids[2] = gettid();
  char path[4096];
  path_of(path, sizeof path, "child.dat");
  child = fork();
  if (child == 0) {
    execl(child_program, child_program, path, (char*)NULL);
    _exit(127);
  }
  int status = 0;
  if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
      WEXITSTATUS(status) != 0) {
    exit(40);
  }
  return NULL;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: io_threads DIR CHILD_PROGRAM\n");
    return 1;
  }
  dir = argv[1];
  child_program = argv[2];
  void* (*bodies[3])(void*) = {stdio_io, posix_io, spawner};
  for (int i = 0; i < 3; i++) {
    pthread_t t;
    if (pthread_create(&t, NULL, bodies[i], NULL) != 0 || pthread_join(t, NULL) != 0) return 9;
  }
  printf("main=%d stdio=%d posix=%d spawner=%d child=%d\n", getpid(), tids[0], tids[1], tids[2],
         child);
  return IO_THREADS_EXIT_STATUS;
}
