/* The issue-4 workload for the merge tests:  merge_app DIR CHILD_PROGRAM
 * Three threads, run one after the other so each user call's system calls are unambiguous:
 *   stdio:   fopen(DIR/stdio.dat,"w"), 3 x fwrite 100 B (buffered: one write(300) inside fclose),
 *            fclose; fopen "r", fread 300 B (one read), fclose.
 *   posix:   open(DIR/posix.dat), write 4 KiB, pwrite 4 KiB at 4096, fsync (not wrapped by
 *            EZTrace: kernel only), pread via lseek+read 4 KiB, close.
 *   spawner: fork; the child execs CHILD_PROGRAM DIR/child.dat (traced by EZTrace on its own).
 * Prints "stdio=<tid> posix=<tid> spawner=<tid> child=<pid>". */
#define _GNU_SOURCE
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
  char path[4096], buf[300];
  path_of(path, sizeof path, "stdio.dat");
  memset(buf, 's', sizeof buf);
  FILE* f = fopen(path, "w");
  if (!f) exit(2);
  for (int i = 0; i < 3; i++) fwrite(buf + 100 * i, 1, 100, f);
  fclose(f);
  f = fopen(path, "r");
  if (!f || fread(buf, 1, sizeof buf, f) != sizeof buf) exit(3);
  fclose(f);
  return NULL;
}

static void* posix_io(void* arg) {
  (void)arg;
  tids[1] = gettid();
  char path[4096];
  static char buf[4096];
  path_of(path, sizeof path, "posix.dat");
  memset(buf, 'p', sizeof buf);
  int fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0644);
  if (fd < 0) exit(4);
  if (write(fd, buf, sizeof buf) != sizeof buf) exit(5);
  if (pwrite(fd, buf, sizeof buf, 4096) != sizeof buf) exit(6);
  fsync(fd);
  lseek(fd, 0, SEEK_SET);
  if (read(fd, buf, sizeof buf) != sizeof buf) exit(7);
  close(fd);
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
    exit(8);
  }
  return NULL;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: merge_app DIR CHILD_PROGRAM\n");
    return 1;
  }
  dir = argv[1];
  child_program = argv[2];
  void* (*bodies[3])(void*) = {stdio_io, posix_io, spawner};
  for (int i = 0; i < 3; i++) {
    pthread_t t;
    if (pthread_create(&t, NULL, bodies[i], NULL) != 0 || pthread_join(t, NULL) != 0) return 9;
  }
  printf("stdio=%d posix=%d spawner=%d child=%d\n", tids[0], tids[1], tids[2], child);
  return 0;
}
