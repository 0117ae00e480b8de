// SPDX-License-Identifier: GPL-2.0-only
/* The MPI workload of the merge tests (tests/unit/merge, tests/e2e/merge): 2 ranks, each writes
 * then reads back its own file with POSIX calls, then MPI_Barrier and one MPI_Send/MPI_Recv from
 * rank 0 to rank 1.
 * Usage: mpi_io DIR. Prints "rank=R pid=P" per rank so that the tests know which process is
 * which rank. All I/O is after MPI_Init: in MPI mode EZTrace starts inside MPI_Init. */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../mpi_two_ranks.h"

#define FILE_BYTES 3000

int main(int argc, char** argv) {
  const char* dir = NULL;
  const int rank = mpi_two_ranks_start(&argc, &argv, "mpi_io", &dir);
  char path[4096];
  snprintf(path, sizeof path, "%s/rank%d.dat", dir, rank);
  static char buf[FILE_BYTES];
  memset(buf, 'a' + rank, sizeof buf);

  int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
  if (fd < 0 || write(fd, buf, sizeof buf) != (ssize_t)sizeof buf || close(fd) != 0) {
    perror(path);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  fd = open(path, O_RDONLY);
  if (fd < 0 || read(fd, buf, sizeof buf) != (ssize_t)sizeof buf || close(fd) != 0) {
    perror(path);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }

  MPI_Barrier(MPI_COMM_WORLD);
  int token = 42;
  if (rank == 0) {
    MPI_Send(&token, 1, MPI_INT, 1, 7, MPI_COMM_WORLD);
  } else {
    MPI_Recv(&token, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  printf("rank=%d pid=%d token=%d\n", rank, (int)getpid(), token);
  fflush(stdout);
  MPI_Finalize();
  return 0;
}
