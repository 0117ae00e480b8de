// SPDX-License-Identifier: GPL-2.0-only
/* Many small MPI-IO writes, timed (bench/mpiio): mpiio_small_writes DIR N BYTES KIND has every rank
 * of MPI_COMM_WORLD write BYTES bytes N times into DIR/small.dat, each at its own offset
 * ((i * ranks + rank) * BYTES), with MPI_File_write_at (KIND `at`) or MPI_File_write_at_all (KIND
 * `at_all`), and rank 0 prints the mean wall and CPU time (its thread's: steadier on a shared
 * host) per call, the slowest rank's CPU:
 *   calls=N ns_per_call=X cpu_ns_per_call=Y */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long long now_ns(clockid_t clock) {
  struct timespec t;
  clock_gettime(clock, &t);
  return t.tv_sec * 1000000000ll + t.tv_nsec;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  long n = argc == 5 ? atol(argv[2]) : 0, bytes = argc == 5 ? atol(argv[3]) : 0;
  int collective = argc == 5 && strcmp(argv[4], "at_all") == 0;
  if (n <= 0 || bytes <= 0 || bytes > 1 << 20 || (!collective && strcmp(argv[4], "at") != 0)) {
    if (rank == 0) fprintf(stderr, "usage: mpiio_small_writes DIR N BYTES at|at_all\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/small.dat", argv[1]);
  char* buf = malloc((size_t)bytes);
  if (!buf) MPI_Abort(MPI_COMM_WORLD, 1);
  memset(buf, 'a' + rank, (size_t)bytes);
  MPI_File fh;
  if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh) !=
      MPI_SUCCESS)
    MPI_Abort(MPI_COMM_WORLD, 1);
  MPI_Barrier(MPI_COMM_WORLD);
  long long t0 = now_ns(CLOCK_MONOTONIC), c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
  for (long i = 0; i < n; i++) {
    MPI_Offset at = (MPI_Offset)(i * size + rank) * bytes;
    int rc = collective
                 ? MPI_File_write_at_all(fh, at, buf, (int)bytes, MPI_BYTE, MPI_STATUS_IGNORE)
                 : MPI_File_write_at(fh, at, buf, (int)bytes, MPI_BYTE, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 1);
  }
  long long t1 = now_ns(CLOCK_MONOTONIC), c1 = now_ns(CLOCK_THREAD_CPUTIME_ID);
  MPI_File_close(&fh);
  long long cpu = c1 - c0, slowest = 0;
  MPI_Reduce(&cpu, &slowest, 1, MPI_LONG_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0)
    printf("calls=%ld ns_per_call=%.1f cpu_ns_per_call=%.1f\n", n, (double)(t1 - t0) / (double)n,
           (double)slowest / (double)n);
  free(buf);
  MPI_Finalize();
  return 0;
}
