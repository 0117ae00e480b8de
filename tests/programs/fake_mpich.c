// SPDX-License-Identifier: GPL-2.0-only
/* What the preload helper's MPI_Finalize (converters/eztrace/preload/mpi_finalize.c) looks for
 * and calls in an MPICH process, each saying on stdout that it was called: MPICH's MPI_Finalize
 * and PMPI_Barrier, a symbol only MPICH defines, and nanosleep (linked into finalize_probe ahead
 * of libc: the helper's pause is said, not slept). Its output is the order of the helper's steps
 * (tests/unit/eztrace/mpi_finalize_test.cpp). */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void say(const char* line) {
  if (write(1, line, strlen(line)) < 0) return;
}

int MPI_Finalize(void) {
  say("finalize\n");
  return 0;
}

int PMPI_Barrier(int comm) {
  char line[64];
  snprintf(line, sizeof line, "barrier 0x%x\n", (unsigned)comm);
  say(line);
  return 0;
}

int MPIR_Err_create_code(void) { return 0; }

int nanosleep(const struct timespec* req, struct timespec* rem) {
  (void)rem;
  char line[64];
  snprintf(line, sizeof line, "pause %lld ns\n",
           (long long)req->tv_sec * 1000000000LL + (long long)req->tv_nsec);
  say(line);
  return 0;
}
