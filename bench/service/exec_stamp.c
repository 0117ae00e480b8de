/* Writes CLOCK_MONOTONIC (ns) at the start of main to the file named by its argument: the instant
 * the application's exec completed, for the start-up bench (bench/service/run.py). */
#include <stdio.h>
#include <time.h>

int main(int argc, char** argv) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  if (argc < 2) return 2;
  FILE* f = fopen(argv[1], "w");
  if (!f) return 3;
  fprintf(f, "%lld\n", (long long)t.tv_sec * 1000000000LL + t.tv_nsec);
  return fclose(f) != 0;
}
