// SPDX-License-Identifier: GPL-2.0-only
/* Processes EZTrace sees, and one it does not:  spawn_children MODE N DIR
 * exec: forks N children that each exec this program again as `spawn_children child I DIR`
 *       (N processes of one program: each must keep its own EZTrace trace);
 * fork: forks N children that write DIR/forked-I without exec (EZTrace does not trace them).
 * child: writes DIR/exec-I. Prints "child=<pid>" for each child it started. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int write_file(const char* dir, const char* kind, const char* index) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s-%s", dir, kind, index);
  int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
  if (fd < 0) return 2;
  if (write(fd, "data\n", 5) != 5) return 3;
  return close(fd) == 0 ? 0 : 4;
}

int main(int argc, char** argv) {
  if (argc != 4) return 1;
  if (strcmp(argv[1], "child") == 0) return write_file(argv[3], "exec", argv[2]);
  int exec_mode = strcmp(argv[1], "exec") == 0;
  int n = atoi(argv[2]);
  for (int i = 0; i < n; i++) {
    char index[16];
    snprintf(index, sizeof index, "%d", i);
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) return 5;
    if (pid == 0) {
      if (!exec_mode) _exit(write_file(argv[3], "forked", index));
      execl("/proc/self/exe", "spawn_children", "child", index, argv[3], (char*)NULL);
      _exit(6);
    }
    printf("child=%d\n", (int)pid);
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      return 7;
    }
  }
  return 0;
}
