// SPDX-License-Identifier: GPL-2.0-only
// The data-moving MPI_File_* wrappers with `int` counts, and the split collectives' ends.
#include "mpiio_rw.inc"

MPIIO_ALL_FORMS(, int)

#define MPIIO_END(NAME, BUF)                                      \
  int MPI_File_##NAME(MPI_File fh, BUF buf, MPI_Status* status) { \
    static int region = -1;                                       \
    struct mpiio_call call;                                       \
    MPI_Status local;                                             \
    if (status == MPI_STATUS_IGNORE) status = &local;             \
    mpiio_enter(&call, &region, __func__);                        \
    int rc = PMPI_File_##NAME(fh, buf, status);                   \
    mpiio_split_end(&call, fh, rc, status);                       \
    return rc;                                                    \
  }

MPIIO_END(read_at_all_end, void*)
MPIIO_END(write_at_all_end, const void*)
MPIIO_END(read_all_end, void*)
MPIIO_END(write_all_end, const void*)
MPIIO_END(read_ordered_end, void*)
MPIIO_END(write_ordered_end, const void*)
