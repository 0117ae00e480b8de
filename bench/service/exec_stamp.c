// SPDX-License-Identifier: GPL-2.0-only
/* Writes CLOCK_MONOTONIC (ns) at the start of main to the file named by its argument: the instant
 * the application's exec completed, for the start-up bench (bench/service/run.py). Then, on the
 * same line, the CPU time (ns) its parent had used until then (/proc/PPID/schedstat, first field;
 * -1 when unreadable): for eziotrace, its own work before the application's start, a figure that
 * the other loads of a shared machine do not inflate as they do the wall time. */
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static long long parent_cpu_ns(void) {
  char path[64];
  snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)getppid());
  FILE* f = fopen(path, "r");
  if (!f) return -1;
  long long ns = -1;
  if (fscanf(f, "%lld", &ns) != 1) ns = -1;
  fclose(f);
  return ns;
}

int main(int argc, char** argv) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  long long cpu = parent_cpu_ns();
  if (argc < 2) return 2;
  FILE* f = fopen(argv[1], "w");
  if (!f) return 3;
  fprintf(f, "%lld %lld\n", (long long)t.tv_sec * 1000000000LL + t.tv_nsec, cpu);
  return fclose(f) != 0;
}
