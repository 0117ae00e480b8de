// SPDX-License-Identifier: GPL-2.0-only
/* The bundled demo workload: what a small data-processing job does with its files.
 * Two threads each write a 32 MiB output through stdio (buffered: absorbed by the page cache),
 * one of them syncs its file to disk; then the main thread reads a part of both back with pread
 * and a child process (forked and exec'd) summarises them with `wc`.
 *   demo_io DIR */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char* dir;

static void* producer(void* arg) {
  long id = (long)arg;
  char path[4096];
  snprintf(path, sizeof(path), "%s/part-%ld.dat", dir, id);
  FILE* f = fopen(path, "w");
  if (!f) exit(3);
  char line[4096];
  memset(line, 'a' + id, sizeof(line));
  line[sizeof(line) - 1] = '\n';
  for (int i = 0; i < 8192; i++) fwrite(line, 1, sizeof(line), f);
  fflush(f);
  if (id == 0) fsync(fileno(f)); /* only part 0 is made durable */
  fclose(f);
  return NULL;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  dir = argv[1];
  pthread_t t[2];
  for (long i = 0; i < 2; i++) pthread_create(&t[i], NULL, producer, (void*)i);
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);

  char path[4096], buf[65536];
  for (int p = 0; p < 2; p++) {
    snprintf(path, sizeof(path), "%s/part-%d.dat", dir, p);
    int fd = open(path, O_RDONLY);
    if (fd < 0) return 4;
    for (int i = 0; i < 16; i++) {
      if (pread(fd, buf, sizeof(buf), (off_t)i * 1048576) != (ssize_t)sizeof(buf)) return 5;
    }
    close(fd);
  }
  pid_t child = fork();
  if (child == 0) {
    snprintf(path, sizeof(path), "%s/part-1.dat", dir);
    execlp("wc", "wc", "-l", path, (char*)NULL);
    _exit(127);
  }
  int status;
  waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
