/* The program merge_app's child execs:  merge_child FILE
 * open FILE, 3 x write 1000 B, close; open it again, read 3000 B in one read, close. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc != 2) return 1;
  char buf[3000];
  memset(buf, 'c', sizeof buf);
  int fd = open(argv[1], O_CREAT | O_WRONLY | O_TRUNC, 0644);
  if (fd < 0) return 2;
  for (int i = 0; i < 3; i++) {
    if (write(fd, buf + 1000 * i, 1000) != 1000) return 3;
  }
  close(fd);
  fd = open(argv[1], O_RDONLY);
  if (fd < 0 || read(fd, buf, sizeof buf) != sizeof buf) return 4;
  close(fd);
  return 0;
}
