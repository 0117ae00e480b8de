// SPDX-License-Identifier: GPL-2.0-only
/* Reads and writes a file until killed or until N seconds passed: unrelated I/O for the isolation
 * test, and a long-running application for the interruption tests.
 *   busy_io FILE SECONDS [crash]   ("crash": dereference NULL after the first writes) */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  int crash = argc > 3 && strcmp(argv[3], "crash") == 0;
  time_t end = time(NULL) + atoi(argv[2]);
  char buf[4096];
  memset(buf, 'u', sizeof(buf));
  int fd = open(argv[1], O_CREAT | O_RDWR | O_TRUNC, 0644);
  if (fd < 0) return 3;
  for (int i = 0; time(NULL) < end; i++) {
    if (pwrite(fd, buf, sizeof(buf), (i % 64) * 4096) != sizeof(buf)) return 4;
    if (crash && i == 10) {
      volatile int* p = NULL;
      *p = 1;
    }
    usleep(1000);
  }
  close(fd);
  return 0;
}
