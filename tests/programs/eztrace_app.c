// SPDX-License-Identifier: GPL-2.0-only
/* A small I/O workload recorded by EZTrace in the profile cross-check test: writes, reads, a seek
 * and stdio calls on files under the directory given as argv[1], from two threads. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char* dir;

static void* worker(void* arg) {
  char path[4096], buf[8192];
  memset(buf, 'x', sizeof buf);
  snprintf(path, sizeof path, "%s/data%ld.bin", dir, (long)arg);
  int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
  if (fd < 0) return NULL;
  for (int i = 0; i < 20; ++i) {
    if (write(fd, buf, (size_t)(512 * (i % 8 + 1))) < 0) break;
  }
  close(fd);
  fd = open(path, O_RDONLY);
  while (read(fd, buf, 4096) > 0) {
  }
  lseek(fd, 0, SEEK_SET);
  if (read(fd, buf, 100) < 0) return NULL;
  close(fd);
  return NULL;
}

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  dir = argv[1];
  pthread_t t;
  pthread_create(&t, NULL, worker, (void*)1L);
  worker((void*)0L);
  pthread_join(t, NULL);
  char path[4096];
  snprintf(path, sizeof path, "%s/stdio.txt", dir);
  FILE* f = fopen(path, "w");
  if (!f) return 1;
  for (int i = 0; i < 5; ++i) fprintf(f, "line %d\n", i);
  fwrite("end\n", 1, 4, f);
  fclose(f);
  return 0;
}
