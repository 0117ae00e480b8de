// SPDX-License-Identifier: GPL-2.0-only
/* The program's own first I/O: its constructor writes <dir>/ctor.txt, main <dir>/main.txt. A
 * recording holds both whether the program waited at eziotrace's start gate (dynamically linked)
 * or before its exec (statically linked: built twice, tests/e2e/merge/start_gate_test.cpp). */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

static void touch(const char* dir, const char* name) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return;
  if (write(fd, "x", 1) != 1) perror(path);
  close(fd);
}

/* glibc passes main's arguments to the program's constructors too. */
__attribute__((constructor)) static void first(int argc, char** argv) {
  if (argc > 1) touch(argv[1], "ctor.txt");
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: gate_probe DIR\n");
    return 2;
  }
  touch(argv[1], "main.txt");
  return 0;
}
