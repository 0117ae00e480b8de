/* SPDX-License-Identifier: GPL-2.0-only */
/* The start every two-rank MPI test program shares: MPI up, exactly two ranks and one directory
 * argument, else a usage line naming the program and MPI_Abort (a test that runs it wrong must see
 * why, not a rank blocked in a collective). Returns the rank; *dir is the directory. */
#ifndef EZIO_TEST_MPI_TWO_RANKS_H
#define EZIO_TEST_MPI_TWO_RANKS_H

#include <mpi.h>
#include <stdio.h>

static inline int mpi_two_ranks_start(int* argc, char*** argv, const char* program,
                                      const char** dir) {
  MPI_Init(argc, argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (*argc != 2 || size != 2) {
    fprintf(stderr, "usage: mpiexec -np 2 %s DIR\n", program);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  *dir = (*argv)[1];
  return rank;
}

#endif
