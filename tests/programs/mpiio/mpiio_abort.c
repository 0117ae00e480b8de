// SPDX-License-Identifier: GPL-2.0-only
/* An MPI application that aborts inside a collective write (tests/e2e/mpiio): 2 ranks open
 * DIR/abort.dat, write it once collectively, then call MPI_File_write_all again, where rank 1
 * passes a negative count: the file's error handler, called inside rank 1's MPI_File_write_all,
 * calls MPI_Abort while rank 0 is in its own MPI_File_write_all. Usage: mpiexec -np 2
 * mpiio_abort DIR. Prints "rank=R pid=P writing" before the second write. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../mpi_two_ranks.h"

#define BLOCK 4096
#define ABORT_STATUS 7

static void abort_on_error(MPI_File* fh, int* code, ...) {
  (void)fh;
  (void)code;
  MPI_Abort(MPI_COMM_WORLD, ABORT_STATUS);
}

int main(int argc, char** argv) {
  const char* dir = NULL;
  const int rank = mpi_two_ranks_start(&argc, &argv, "mpiio_abort", &dir);
  char path[4096];
  snprintf(path, sizeof path, "%s/abort.dat", dir);
  static char bytes[BLOCK];
  memset(bytes, 'a' + rank, sizeof bytes);
  MPI_File fh;
  MPI_Errhandler handler;
  MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
  MPI_File_create_errhandler(abort_on_error, &handler);
  MPI_File_set_errhandler(fh, handler);
  MPI_File_set_view(fh, (MPI_Offset)rank * BLOCK, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
  MPI_File_write_all(fh, bytes, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE);
  /* Also in a file: the launcher may tear the ranks' output down before it forwards it. */
  char note[4096];
  snprintf(note, sizeof note, "%s/rank%d.pid", dir, rank);
  FILE* f = fopen(note, "w");
  if (f) fprintf(f, "rank=%d pid=%d writing\n", rank, (int)getpid()), fclose(f);
  printf("rank=%d pid=%d writing\n", rank, (int)getpid());
  fflush(stdout);
  /* Both notes written before rank 1 aborts: the launcher kills rank 0 at once then, which left
   * rank 0 without its note in one CI run (it had left the first write later than rank 1). */
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_File_write_all(fh, bytes, rank == 1 ? -1 : BLOCK, MPI_BYTE, MPI_STATUS_IGNORE);
  MPI_File_close(&fh);
  MPI_Finalize();
  return 0;
}
