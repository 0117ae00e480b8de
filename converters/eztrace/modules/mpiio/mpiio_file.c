// SPDX-License-Identifier: GPL-2.0-only
// MPI_File_* calls that change a file's state.
#include "mpiio.h"

int MPI_File_open(MPI_Comm comm, const char* filename, int amode, MPI_Info info, MPI_File* fh) {
  static int region = -1;
  struct mpiio_call call;
  mpiio_enter(&call, &region, __func__);
  int rc = PMPI_File_open(comm, filename, amode, info, fh);
  if (rc == MPI_SUCCESS) mpiio_opened(&call, comm, *fh, filename, amode);
  mpiio_leave(&call);
  return rc;
}

int MPI_File_close(MPI_File* fh) {
  static int region = -1;
  struct mpiio_call call;
  mpiio_enter(&call, &region, __func__);
  MPI_File closing = *fh;
  int rc = PMPI_File_close(fh);
  if (rc == MPI_SUCCESS) mpiio_closing(&call, closing);
  mpiio_leave(&call);
  return rc;
}

int MPI_File_delete(const char* filename, MPI_Info info) {
  static int region = -1;
  struct mpiio_call call;
  mpiio_enter(&call, &region, __func__);
  int rc = PMPI_File_delete(filename, info);
  if (rc == MPI_SUCCESS) mpiio_deleted(&call, filename);
  mpiio_leave(&call);
  return rc;
}

// Calls OTF2 has no event for: the region says what happened.
#define MPIIO_REGION_ONLY(NAME, PARAMS, ARGS) \
  int MPI_File_##NAME PARAMS {                \
    static int region = -1;                   \
    struct mpiio_call call;                   \
    mpiio_enter(&call, &region, __func__);    \
    int rc = PMPI_File_##NAME ARGS;           \
    mpiio_leave(&call);                       \
    return rc;                                \
  }

MPIIO_REGION_ONLY(set_size, (MPI_File fh, MPI_Offset size), (fh, size))
MPIIO_REGION_ONLY(preallocate, (MPI_File fh, MPI_Offset size), (fh, size))
MPIIO_REGION_ONLY(set_view,
                  (MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                   const char* datarep, MPI_Info info),
                  (fh, disp, etype, filetype, datarep, info))

// A flush of everything written through the handle: an operation of its own.
int MPI_File_sync(MPI_File fh) {
  static int region = -1;
  struct mpiio_call call;
  struct mpiio_io io = {OTF2_IO_OPERATION_MODE_FLUSH,
                        OTF2_IO_OPERATION_FLAG_COLLECTIVE,
                        MPIIO_OFFSET_SHARED,
                        0,
                        0,
                        MPI_BYTE};
  mpiio_io_begin(&call, &region, __func__, fh, &io);
  int rc = PMPI_File_sync(fh);
  mpiio_io_started(&call, rc);
  return rc;
}

int MPI_File_seek(MPI_File fh, MPI_Offset offset, int whence) {
  static int region = -1;
  struct mpiio_call call;
  mpiio_enter(&call, &region, __func__);
  int rc = PMPI_File_seek(fh, offset, whence);
  if (rc == MPI_SUCCESS) mpiio_seeked(&call, fh, offset, whence, 0);
  mpiio_leave(&call);
  return rc;
}

int MPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence) {
  static int region = -1;
  struct mpiio_call call;
  mpiio_enter(&call, &region, __func__);
  int rc = PMPI_File_seek_shared(fh, offset, whence);
  if (rc == MPI_SUCCESS) mpiio_seeked(&call, fh, offset, whence, 1);
  mpiio_leave(&call);
  return rc;
}
