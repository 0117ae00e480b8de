// SPDX-License-Identifier: GPL-2.0-only
/* Writes 3 x 1000 bytes to the file named by its argument. */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  char buf[1000];
  memset(buf, 'w', sizeof(buf));
  int fd = open(argv[1], O_CREAT | O_WRONLY | O_TRUNC, 0644);
  if (fd < 0) return 3;
  for (int i = 0; i < 3; i++) {
    if (write(fd, buf, sizeof(buf)) != sizeof(buf)) return 4;
  }
  return close(fd) == 0 ? 0 : 5;
}
