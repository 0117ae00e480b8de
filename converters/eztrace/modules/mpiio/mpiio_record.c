// SPDX-License-Identifier: GPL-2.0-only
// Writing the module's events with EZTrace's event writer and clock.
#include <eztrace-lib/eztrace.h>
#include <stdatomic.h>

#include "../ezt_record_common.h"
#include "mpiio.h"

// ROMIO's collective calls may call public MPI_File_* functions: only the outermost is recorded.
static __thread int depth __attribute__((tls_model("initial-exec")));
static int offset_attribute = -1;

static int can_record(void) { return ezt_can_record(); }

// Whether this call is the one to record: outermost, EZTrace running. Counts the depth.
static int begin_call(struct mpiio_call* call, int* region_cache, const char* name) {
  call->region = -1;
  call->handle = OTF2_UNDEFINED_IO_HANDLE;
  call->matching_id = 0;
  call->bytes_requested = 0;
  if (depth++ > 0 || !can_record() || recursion_shield_on()) return 0;
  if (*region_cache < 0) {
    set_recursion_shield_on();
    *region_cache = ezt_otf2_register_function(name);
    set_recursion_shield_off();
  }
  call->region = *region_cache;
  return call->region >= 0;
}

void mpiio_enter(struct mpiio_call* call, int* region_cache, const char* name) {
  if (!begin_call(call, region_cache, name)) return;
  set_recursion_shield_on();
  OTF2_EvtWriter_Enter(ezt_writer(), NULL, ezt_get_timestamp(), (OTF2_RegionRef)call->region);
  set_recursion_shield_off();
}

void mpiio_leave(struct mpiio_call* call) {
  depth--;
  if (call->region < 0 || !can_record()) return;
  set_recursion_shield_on();
  OTF2_EvtWriter_Leave(ezt_writer(), NULL, ezt_get_timestamp(), (OTF2_RegionRef)call->region);
  set_recursion_shield_off();
}

// The offset in bytes from the file's start, through the view; undefined for the shared pointer.
static int64_t byte_offset(MPI_File fh, const struct mpiio_io* io) {
  MPI_Offset etypes = io->offset, bytes = 0;
  if (io->offset_kind == MPIIO_OFFSET_SHARED) return -1;
  if (io->offset_kind == MPIIO_OFFSET_INDIVIDUAL &&
      PMPI_File_get_position(fh, &etypes) != MPI_SUCCESS)
    return -1;
  if (PMPI_File_get_byte_offset(fh, etypes, &bytes) != MPI_SUCCESS) return -1;
  return (int64_t)bytes;
}

static uint64_t bytes_of(MPI_Count count, MPI_Datatype type) {
  MPI_Count size = 0;
  if (PMPI_Type_size_x(type, &size) != MPI_SUCCESS || size < 0 || count < 0) return 0;
  return (uint64_t)count * (uint64_t)size;
}

// The `mpiio.offset` attribute list, NULL for an unknown offset. OTF2's IoOperationBegin has no
// offset: it stays an attribute of each read and write.
static OTF2_AttributeList* offset_list(int64_t offset) {
  if (offset < 0) return NULL;
  if (offset_attribute < 0)
    offset_attribute = ezt_otf2_register_attribute("mpiio.offset", OTF2_TYPE_INT64);
  OTF2_AttributeList* list = ezt_thread_attributes();
  if (list) OTF2_AttributeList_AddInt64(list, (OTF2_AttributeRef)offset_attribute, offset);
  return list;
}

// The ENTER and the IoOperationBegin at one clock read (the operation is the call), the call
// described before.
void mpiio_io_begin(struct mpiio_call* call, int* region_cache, const char* name, MPI_File fh,
                    const struct mpiio_io* io) {
  if (!begin_call(call, region_cache, name)) return;
  int64_t offset = byte_offset(fh, io);
  call->bytes_requested = bytes_of(io->count, io->type);
  call->handle = mpiio_handle_of(fh);
  call->matching_id = ezt_matching_id();
  set_recursion_shield_on();
  OTF2_AttributeList* attrs = offset_list(offset);
  uint64_t t = ezt_get_timestamp();
  OTF2_EvtWriter_Enter(ezt_writer(), NULL, t, (OTF2_RegionRef)call->region);
  OTF2_EvtWriter_IoOperationBegin(ezt_writer(), attrs, t, call->handle, io->mode, io->flags,
                                  call->bytes_requested, call->matching_id);
  set_recursion_shield_off();
}

static uint64_t bytes_done(int rc, MPI_Status* status) {
  MPI_Count n = 0;
  if (rc != MPI_SUCCESS) return OTF2_UNDEFINED_UINT64;
  if (PMPI_Get_elements_x(status, MPI_BYTE, &n) != MPI_SUCCESS || n < 0)
    return OTF2_UNDEFINED_UINT64;
  return (uint64_t)n;
}

static void complete(struct mpiio_call* call, uint64_t bytes) {
  if (call->region < 0 || !can_record()) return;
  set_recursion_shield_on();
  OTF2_EvtWriter_IoOperationComplete(ezt_writer(), NULL, ezt_get_timestamp(), call->handle, bytes,
                                     call->matching_id);
  set_recursion_shield_off();
}

// The IoOperationComplete and the LEAVE, at one clock read.
void mpiio_io_complete(struct mpiio_call* call, int rc, MPI_Status* status) {
  depth--;
  if (call->region < 0 || !can_record()) return;
  uint64_t bytes = bytes_done(rc, status);
  set_recursion_shield_on();
  uint64_t t = ezt_get_timestamp();
  OTF2_EvtWriter_IoOperationComplete(ezt_writer(), NULL, t, call->handle, bytes, call->matching_id);
  OTF2_EvtWriter_Leave(ezt_writer(), NULL, t, (OTF2_RegionRef)call->region);
  set_recursion_shield_off();
}

void mpiio_write_complete(OTF2_IoHandleRef handle, uint64_t matching_id, MPI_Status* status) {
  if (!can_record() || recursion_shield_on()) return;
  uint64_t bytes = bytes_done(MPI_SUCCESS, status);
  set_recursion_shield_on();
  OTF2_EvtWriter_IoOperationComplete(ezt_writer(), NULL, ezt_get_timestamp(), handle, bytes,
                                     matching_id);
  set_recursion_shield_off();
}

void mpiio_request_started(struct mpiio_call* call, int rc, const MPI_Request* request) {
  if (call->region >= 0 && rc == MPI_SUCCESS && can_record()) {
    set_recursion_shield_on();
    OTF2_EvtWriter_IoOperationIssued(ezt_writer(), NULL, ezt_get_timestamp(), call->handle,
                                     call->matching_id);
    set_recursion_shield_off();
    mpiio_request_add(*request, call->handle, call->matching_id);
  }
  mpiio_leave(call);
}

void mpiio_io_started(struct mpiio_call* call, int rc) {
  complete(call, rc == MPI_SUCCESS ? call->bytes_requested : OTF2_UNDEFINED_UINT64);
  mpiio_leave(call);
}

void mpiio_split_end(struct mpiio_call* call, MPI_File fh, int rc, MPI_Status* status) {
  uint64_t id = 0, bytes = 0;
  if (call->region >= 0 && mpiio_split_take(fh, &id, &bytes)) {
    call->handle = mpiio_handle_of(fh);
    call->matching_id = id;
    call->bytes_requested = bytes;
    complete(call, rc == MPI_SUCCESS ? bytes_done(rc, status) : OTF2_UNDEFINED_UINT64);
  }
  mpiio_leave(call);
}

// The communicator a file was opened on, as attributes of its IoCreateHandle: its size and this
// process's rank in it (OTF2 comms are EZTrace's, whose ids collide across ranks).
static OTF2_AttributeList* comm_attributes(MPI_Comm comm) {
  static int size_attribute = -1, rank_attribute = -1;
  int size = 0, rank = 0;
  if (PMPI_Comm_size(comm, &size) != MPI_SUCCESS || PMPI_Comm_rank(comm, &rank) != MPI_SUCCESS)
    return NULL;
  if (size_attribute < 0)
    size_attribute = ezt_otf2_register_attribute("mpiio.comm_size", OTF2_TYPE_UINT32);
  if (rank_attribute < 0)
    rank_attribute = ezt_otf2_register_attribute("mpiio.comm_rank", OTF2_TYPE_UINT32);
  OTF2_AttributeList* attrs = ezt_thread_attributes();
  if (!attrs) return NULL;
  OTF2_AttributeList_AddUint32(attrs, (OTF2_AttributeRef)size_attribute, (uint32_t)size);
  OTF2_AttributeList_AddUint32(attrs, (OTF2_AttributeRef)rank_attribute, (uint32_t)rank);
  return attrs;
}

void mpiio_opened(struct mpiio_call* call, MPI_Comm comm, MPI_File fh, const char* path,
                  int amode) {
  OTF2_IoHandleRef h = mpiio_handle_new(fh, path);
  if (call->region < 0 || !can_record()) return;
  OTF2_IoAccessMode mode = (amode & MPI_MODE_RDWR)     ? OTF2_IO_ACCESS_MODE_READ_WRITE
                           : (amode & MPI_MODE_WRONLY) ? OTF2_IO_ACCESS_MODE_WRITE_ONLY
                                                       : OTF2_IO_ACCESS_MODE_READ_ONLY;
  OTF2_IoCreationFlag creation = OTF2_IO_CREATION_FLAG_NONE;
  if (amode & MPI_MODE_CREATE) creation |= OTF2_IO_CREATION_FLAG_CREATE;
  if (amode & MPI_MODE_EXCL) creation |= OTF2_IO_CREATION_FLAG_EXCLUSIVE;
  OTF2_IoStatusFlag status = OTF2_IO_STATUS_FLAG_NONE;
  if (amode & MPI_MODE_APPEND) status |= OTF2_IO_STATUS_FLAG_APPEND;
  if (amode & MPI_MODE_DELETE_ON_CLOSE) status |= OTF2_IO_STATUS_FLAG_DELETE_ON_CLOSE;
  set_recursion_shield_on();
  OTF2_AttributeList* attrs = comm_attributes(comm);
  OTF2_EvtWriter_IoCreateHandle(ezt_writer(), attrs, ezt_get_timestamp(), h, mode, creation,
                                status);
  set_recursion_shield_off();
}

void mpiio_closing(struct mpiio_call* call, MPI_File fh) {
  OTF2_IoHandleRef h = mpiio_handle_of(fh);
  mpiio_handle_forget(fh);
  if (call->region < 0 || !can_record()) return;
  set_recursion_shield_on();
  OTF2_EvtWriter_IoDestroyHandle(ezt_writer(), NULL, ezt_get_timestamp(), h);
  set_recursion_shield_off();
}

void mpiio_deleted(struct mpiio_call* call, const char* path) {
  if (call->region < 0 || !can_record()) return;
  OTF2_IoFileRef file = mpiio_file_new(path);
  set_recursion_shield_on();
  OTF2_EvtWriter_IoDeleteFile(ezt_writer(), NULL, ezt_get_timestamp(), MPIIO_PARADIGM, file);
  set_recursion_shield_off();
}

void mpiio_seeked(struct mpiio_call* call, MPI_File fh, MPI_Offset offset, int whence, int shared) {
  if (call->region < 0 || !can_record()) return;
  MPI_Offset pos = 0, bytes = 0;
  uint64_t result = OTF2_UNDEFINED_UINT64;
  if (!shared && PMPI_File_get_position(fh, &pos) == MPI_SUCCESS &&
      PMPI_File_get_byte_offset(fh, pos, &bytes) == MPI_SUCCESS)
    result = (uint64_t)bytes;
  OTF2_IoSeekOption option = whence == MPI_SEEK_SET   ? OTF2_IO_SEEK_FROM_START
                             : whence == MPI_SEEK_CUR ? OTF2_IO_SEEK_FROM_CURRENT
                                                      : OTF2_IO_SEEK_FROM_END;
  set_recursion_shield_on();
  OTF2_EvtWriter_IoSeek(ezt_writer(), NULL, ezt_get_timestamp(), mpiio_handle_of(fh), offset,
                        option, result);
  set_recursion_shield_off();
}
