// SPDX-License-Identifier: GPL-2.0-only
/* The MPI-IO workload of the mpiio module's test (tests/e2e/mpiio): 2 ranks share DIR/shared.dat
 * and make each kind of MPI-IO call once per rank, in this order, with the sizes below (the test
 * asserts them): open, write_at_all, write_at, write_shared, set_view, write_all, read_at_all,
 * iwrite_at + MPI_Wait, write_all_begin/end, sync, set_size, preallocate, seek, read,
 * write_ordered, write_at_c (MPI 4's large-count form: MPICH 4.0 has it, Open MPI 4.1 does not),
 * close; then rank 0 deletes the file. Usage:
 * mpiexec -np 2 mpiio_calls DIR. All MPI-IO is after MPI_Init (EZTrace starts there). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../mpi_two_ranks.h"

#define BLOCK 4096        /* write_at_all: BLOCK bytes at rank * BLOCK */
#define AT_INTS 1000      /* write_at: AT_INTS ints at (2 + rank) * BLOCK */
#define SHARED_BYTES 300  /* write_shared */
#define VIEW_DISP 16384   /* set_view: rank's view starts at VIEW_DISP + rank * VIEW_INTS * 4 */
#define VIEW_INTS 256     /* write_all and read_at_all (offset 0 in the view) */
#define IWRITE_OFFSET 512 /* iwrite_at: IWRITE_INTS ints at etype IWRITE_OFFSET of the view */
#define IWRITE_INTS 100
#define SPLIT_INTS 64    /* write_all_begin/end, at the individual pointer */
#define FINAL_SIZE 65536 /* set_size, preallocate */
#define ORDERED_INTS 16  /* write_ordered */
#define C_OFFSET 1024    /* write_at_c: C_INTS ints at etype C_OFFSET of the view */
#define C_INTS 8

static void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) {
    fprintf(stderr, "mpiio_calls: %s failed\n", what);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

int main(int argc, char** argv) {
  const char* dir = NULL;
  const int rank = mpi_two_ranks_start(&argc, &argv, "mpiio_calls", &dir);
  char path[4096];
  snprintf(path, sizeof path, "%s/shared.dat", dir);
  static char bytes[BLOCK];
  static int ints[AT_INTS];
  memset(bytes, 'a' + rank, sizeof bytes);
  for (int i = 0; i < AT_INTS; i++) ints[i] = rank * AT_INTS + i;

  MPI_File fh;
  MPI_Status st;
  MPI_Request req;
  check(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh),
        "open");
  check(MPI_File_write_at_all(fh, (MPI_Offset)rank * BLOCK, bytes, BLOCK, MPI_BYTE, &st),
        "write_at_all");
  check(MPI_File_write_at(fh, (MPI_Offset)(2 + rank) * BLOCK, ints, AT_INTS, MPI_INT, &st),
        "write_at");
  check(MPI_File_write_shared(fh, bytes, SHARED_BYTES, MPI_BYTE, MPI_STATUS_IGNORE),
        "write_shared");
  check(MPI_File_set_view(fh, VIEW_DISP + (MPI_Offset)rank * VIEW_INTS * 4, MPI_INT, MPI_INT,
                          "native", MPI_INFO_NULL),
        "set_view");
  check(MPI_File_write_all(fh, ints, VIEW_INTS, MPI_INT, &st), "write_all");
  check(MPI_File_read_at_all(fh, 0, ints, VIEW_INTS, MPI_INT, &st), "read_at_all");
  check(MPI_File_iwrite_at(fh, IWRITE_OFFSET, ints, IWRITE_INTS, MPI_INT, &req), "iwrite_at");
  check(MPI_Wait(&req, &st), "wait");
  check(MPI_File_write_all_begin(fh, ints, SPLIT_INTS, MPI_INT), "write_all_begin");
  check(MPI_File_write_all_end(fh, ints, &st), "write_all_end");
  check(MPI_File_sync(fh), "sync");
  check(MPI_File_set_size(fh, FINAL_SIZE), "set_size");
  check(MPI_File_preallocate(fh, FINAL_SIZE), "preallocate");
  check(MPI_File_seek(fh, 0, MPI_SEEK_SET), "seek");
  check(MPI_File_read(fh, ints, VIEW_INTS, MPI_INT, &st), "read");
  check(MPI_File_write_ordered(fh, ints, ORDERED_INTS, MPI_INT, &st), "write_ordered");
#if MPI_VERSION >= 4
  check(MPI_File_write_at_c(fh, C_OFFSET, ints, (MPI_Count)C_INTS, MPI_INT, &st), "write_at_c");
#endif
  check(MPI_File_close(&fh), "close");
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) check(MPI_File_delete(path, MPI_INFO_NULL), "delete");
  printf("rank=%d pid=%d done\n", rank, (int)getpid());
  fflush(stdout);
  MPI_Finalize();
  return 0;
}
