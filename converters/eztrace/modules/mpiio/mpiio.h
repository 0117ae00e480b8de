// SPDX-License-Identifier: GPL-2.0-only
// The `mpiio` EZTrace module (docs/mpiio.md): MPI_File_* calls wrapped through PMPI and recorded
// into EZTrace's own archive, with EZTrace's clock and event writer, as OTF2 I/O operations of the
// "MPI-IO" paradigm inside a region named after the function.
#ifndef EZIO_MPIIO_H
#define EZIO_MPIIO_H

#include <mpi.h>
#include <otf2/otf2.h>
#include <stdint.h>

// Where an operation's offset comes from (MPI counts it in etypes of the file view).
enum mpiio_offset_kind {
  MPIIO_OFFSET_EXPLICIT,    // the call's offset argument (`_at` forms)
  MPIIO_OFFSET_INDIVIDUAL,  // the individual file pointer, read before the call
  MPIIO_OFFSET_SHARED,      // the shared file pointer: not read (it would cost I/O), undefined
};

// One recorded call: the region and, for an I/O operation, its handle and matching id.
struct mpiio_call {
  int region;  // -1: not recorded (EZTrace not running, or nested in another MPI-IO call)
  OTF2_IoHandleRef handle;
  uint64_t matching_id;
  uint64_t bytes_requested;
};

// A data-moving call's description.
struct mpiio_io {
  OTF2_IoOperationMode mode;
  OTF2_IoOperationFlag flags;
  enum mpiio_offset_kind offset_kind;
  MPI_Offset offset;  // in etypes, for MPIIO_OFFSET_EXPLICIT
  MPI_Count count;
  MPI_Datatype type;
};

// Region bracket. `region_cache` is the caller's static int, initially -1.
void mpiio_enter(struct mpiio_call* call, int* region_cache, const char* name);
void mpiio_leave(struct mpiio_call* call);

// Data-moving calls: ENTER + IoOperationBegin, then IoOperationComplete + LEAVE.
void mpiio_io_begin(struct mpiio_call* call, int* region_cache, const char* name, MPI_File fh,
                    const struct mpiio_io* io);
void mpiio_io_complete(struct mpiio_call* call, int rc, MPI_Status* status);
// Calls whose operation has no bytes to report (sync): completes with the bytes requested.
void mpiio_io_started(struct mpiio_call* call, int rc);
// Non-blocking starts: IoOperationIssued, and the request is followed (mpiio_requests.c) until
// MPI_Wait/MPI_Test... completes it.
void mpiio_request_started(struct mpiio_call* call, int rc, const MPI_Request* request);
void mpiio_request_add(MPI_Request request, OTF2_IoHandleRef handle, uint64_t matching_id);
// IoOperationComplete on the calling thread, with the status's bytes.
void mpiio_write_complete(OTF2_IoHandleRef handle, uint64_t matching_id, MPI_Status* status);
// Split collective end (after mpiio_enter): completes the operation its `_begin` started on fh.
void mpiio_split_end(struct mpiio_call* call, MPI_File fh, int rc, MPI_Status* status);

// File state events (inside an ENTER/LEAVE made by the caller).
void mpiio_opened(struct mpiio_call* call, MPI_Comm comm, MPI_File fh, const char* path, int amode);
void mpiio_closing(struct mpiio_call* call, MPI_File fh);
void mpiio_deleted(struct mpiio_call* call, const char* path);
void mpiio_seeked(struct mpiio_call* call, MPI_File fh, MPI_Offset offset, int whence, int shared);

// Handle table (mpiio_handles.c).
OTF2_IoHandleRef mpiio_handle_of(MPI_File fh);
OTF2_IoHandleRef mpiio_handle_new(MPI_File fh, const char* path);
OTF2_IoHandleRef mpiio_file_new(const char* path);
void mpiio_handle_forget(MPI_File fh);
int mpiio_split_take(MPI_File fh, uint64_t* matching_id, uint64_t* bytes);
void mpiio_split_put(MPI_File fh, uint64_t matching_id, uint64_t bytes);
// Serialized table: "ref path\0" records, for the definitions written by rank 0 at the end.
char* mpiio_handles_serialize(int* size);

// The IoParadigm every handle of this module belongs to.
#define MPIIO_PARADIGM ((OTF2_IoParadigmRef)2)
// Handle, file and string refs of the module start here (mpiio_handles.c), the paradigm's
// strings just below.
#define MPIIO_REF_BASE 0x40000000u
#define MPIIO_STRING_BASE (MPIIO_REF_BASE - 2)

#endif
