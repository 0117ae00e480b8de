// SPDX-License-Identifier: GPL-2.0-only
/* One write() through fake_write.c's write, which makes no system call: under `eziotrace run`
 * the merge finds a user call without its system call (an alignment violation). */
#include <fcntl.h>
#include <unistd.h>

int main(void) {
  int fd = open("/dev/null", O_WRONLY);
  if (fd < 0) return 1;
  if (write(fd, "x", 1) != 1) return 1;
  close(fd);
  return 0;
}
