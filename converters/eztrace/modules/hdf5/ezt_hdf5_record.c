// SPDX-License-Identifier: GPL-2.0-only
// Writing the module's events with EZTrace's event writer and clock.
#include <eztrace-lib/eztrace.h>
#include <pthread.h>
#include <stdatomic.h>

#include "ezt_hdf5.h"

// HDF5 may call its own public API (the high-level library always does): only the outermost
// wrapped call is recorded.
static __thread int depth __attribute__((tls_model("initial-exec")));
static atomic_uint_fast64_t next_matching_id = 1;

// Matching ids, unique in the process: a thread takes them by blocks, one atomic add per block.
static uint64_t matching_id(void) {
  enum { kBlock = 1024 };
  static __thread uint64_t next, end __attribute__((tls_model("initial-exec")));
  if (next == end) {
    next = atomic_fetch_add(&next_matching_id, kBlock);
    end = next + kBlock;
  }
  return next++;
}

// EZTrace's per-thread state, by address: its variables live in libeztrace, where each access
// from here is a call to the TLS resolver; their addresses do not change in a thread's life.
struct ezt_thread {
  enum ezt_trace_status* status;
  OTF2_EvtWriter** writer;
};
static __thread struct ezt_thread ezt __attribute__((tls_model("initial-exec")));

// EZTRACE_SAFE, and a writer to write with.
static int can_record(void) {
  if (!ezt.writer) ezt = (struct ezt_thread){&thread_status, &evt_writer};
  return _ezt_trace.status == ezt_trace_status_running && *ezt.status == ezt_trace_status_running &&
         eztrace_should_trace && *ezt.writer;
}
// The thread's event writer (can_record() first).
static OTF2_EvtWriter* writer(void) { return *ezt.writer; }

static OTF2_StringRef layout_string(int layout) {
  switch (layout) {
    case H5D_COMPACT:
      return HDF5_FIXED_STRING(HDF5_STR_COMPACT);
    case H5D_CONTIGUOUS:
      return HDF5_FIXED_STRING(HDF5_STR_CONTIGUOUS);
    case H5D_CHUNKED:
      return HDF5_FIXED_STRING(HDF5_STR_CHUNKED);
    case H5D_VIRTUAL:
      return HDF5_FIXED_STRING(HDF5_STR_VIRTUAL);
  }
  return OTF2_UNDEFINED_STRING;
}

// NULL when there is nothing to say. One list per thread, reused: OTF2 empties it when it writes
// the event, and a list made per event costs allocations on every call.
static pthread_key_t list_key;  // deletes a thread's list when it ends
static pthread_once_t list_key_once = PTHREAD_ONCE_INIT;
static void delete_list(void* list) { OTF2_AttributeList_Delete(list); }
static void make_list_key(void) { pthread_key_create(&list_key, delete_list); }

static OTF2_AttributeList* attributes(const struct hdf5_describe* d) {
  static __thread OTF2_AttributeList* list;
  if (!d || (d->object == OTF2_UNDEFINED_STRING && d->layout == HDF5_LAYOUT_NONE && d->xfer < 0))
    return NULL;
  if (!list) {
    pthread_once(&list_key_once, make_list_key);
    list = OTF2_AttributeList_New();
    if (list) pthread_setspecific(list_key, list);
  }
  if (!list) return NULL;
  OTF2_AttributeList_RemoveAllAttributes(list);
  OTF2_AttributeValue v;
  if (d->object != OTF2_UNDEFINED_STRING) {
    v.stringRef = d->object;
    OTF2_AttributeList_AddAttribute(list, HDF5_ATTRIBUTE(HDF5_ATTR_OBJECT), OTF2_TYPE_STRING, v);
  }
  if (layout_string(d->layout) != OTF2_UNDEFINED_STRING) {
    v.stringRef = layout_string(d->layout);
    OTF2_AttributeList_AddAttribute(list, HDF5_ATTRIBUTE(HDF5_ATTR_LAYOUT), OTF2_TYPE_STRING, v);
  }
  if (d->layout == H5D_CHUNKED && d->chunk_bytes) {
    v.uint64 = d->chunk_bytes;
    OTF2_AttributeList_AddAttribute(list, HDF5_ATTRIBUTE(HDF5_ATTR_CHUNK_BYTES), OTF2_TYPE_UINT64,
                                    v);
  }
  if (d->xfer >= 0) {
    v.stringRef = HDF5_FIXED_STRING(d->xfer ? HDF5_STR_COLLECTIVE : HDF5_STR_INDEPENDENT);
    OTF2_AttributeList_AddAttribute(list, HDF5_ATTRIBUTE(HDF5_ATTR_XFER), OTF2_TYPE_STRING, v);
  }
  return list;
}

int hdf5_will_record(void) { return depth == 0 && can_record() && !recursion_shield_on(); }

// Whether this call is the one to record: outermost, EZTrace running. Counts the depth.
static int begin_call(struct hdf5_call* call, int* region_cache, const char* name) {
  call->region = -1;
  call->handle = OTF2_UNDEFINED_IO_HANDLE;
  call->matching_id = 0;
  call->bytes = 0;
  call->entered = 0;
  if (depth++ > 0 || !can_record() || recursion_shield_on()) return 0;
  if (*region_cache < 0) {
    set_recursion_shield_on();
    *region_cache = ezt_otf2_register_function(name);
    set_recursion_shield_off();
  }
  call->region = *region_cache;
  return call->region >= 0;
}

int hdf5_enter(struct hdf5_call* call, int* region_cache, const char* name,
               const struct hdf5_describe* describe) {
  if (!begin_call(call, region_cache, name)) return 0;
  set_recursion_shield_on();
  OTF2_AttributeList* list = attributes(describe);
  OTF2_EvtWriter_Enter(writer(), list, ezt_get_timestamp(), (OTF2_RegionRef)call->region);
  call->entered = 1;
  set_recursion_shield_off();
  return 1;
}

int hdf5_enter_io(struct hdf5_call* call, int* region_cache, const char* name) {
  return begin_call(call, region_cache, name);
}

void hdf5_leave(struct hdf5_call* call, const struct hdf5_describe* describe) {
  depth--;
  if (!call->entered || !can_record()) return;
  set_recursion_shield_on();
  OTF2_AttributeList* list = attributes(describe);
  OTF2_EvtWriter_Leave(writer(), list, ezt_get_timestamp(), (OTF2_RegionRef)call->region);
  set_recursion_shield_off();
}

// The ENTER and the IoOperationBegin: one clock read (the operation is the call), one shield.
void hdf5_io_begin(struct hdf5_call* call, OTF2_IoHandleRef handle, OTF2_IoOperationMode mode,
                   uint64_t bytes, const struct hdf5_describe* describe) {
  if (call->region < 0 || !can_record()) return;
  call->handle = handle;
  call->bytes = bytes;
  call->matching_id = matching_id();
  OTF2_IoOperationFlag flags = describe && describe->xfer == 1 ? OTF2_IO_OPERATION_FLAG_COLLECTIVE
                                                               : OTF2_IO_OPERATION_FLAG_NONE;
  set_recursion_shield_on();
  OTF2_AttributeList* list = attributes(describe);
  uint64_t t = ezt_get_timestamp();
  OTF2_EvtWriter_Enter(writer(), NULL, t, (OTF2_RegionRef)call->region);
  OTF2_EvtWriter_IoOperationBegin(writer(), list, t, handle, mode, flags, bytes, call->matching_id);
  call->entered = 1;
  set_recursion_shield_off();
}

// The IoOperationComplete and the LEAVE, at one clock read.
void hdf5_io_end(struct hdf5_call* call, int succeeded) {
  depth--;
  if (!call->entered || !can_record()) return;
  set_recursion_shield_on();
  uint64_t t = ezt_get_timestamp();
  OTF2_EvtWriter_IoOperationComplete(writer(), NULL, t, call->handle, succeeded ? call->bytes : 0,
                                     call->matching_id);
  OTF2_EvtWriter_Leave(writer(), NULL, t, (OTF2_RegionRef)call->region);
  set_recursion_shield_off();
}

// H5F_ACC_* flags of H5Fcreate (created) or H5Fopen.
void hdf5_handle_created(struct hdf5_call* call, OTF2_IoHandleRef handle, unsigned flags,
                         int created) {
  if (call->region < 0 || !can_record()) return;
  OTF2_IoAccessMode mode = created || (flags & HDF5_ACC_RDWR) ? OTF2_IO_ACCESS_MODE_READ_WRITE
                                                              : OTF2_IO_ACCESS_MODE_READ_ONLY;
  OTF2_IoCreationFlag creation = OTF2_IO_CREATION_FLAG_NONE;
  if (created) creation |= OTF2_IO_CREATION_FLAG_CREATE;
  if (created && (flags & HDF5_ACC_EXCL)) creation |= OTF2_IO_CREATION_FLAG_EXCLUSIVE;
  if (created && !(flags & HDF5_ACC_EXCL)) creation |= OTF2_IO_CREATION_FLAG_TRUNCATE;
  set_recursion_shield_on();
  OTF2_EvtWriter_IoCreateHandle(writer(), NULL, ezt_get_timestamp(), handle, mode, creation,
                                OTF2_IO_STATUS_FLAG_NONE);
  set_recursion_shield_off();
}

void hdf5_handle_destroyed(struct hdf5_call* call, OTF2_IoHandleRef handle) {
  if (call->region < 0 || handle == OTF2_UNDEFINED_IO_HANDLE || !can_record()) return;
  set_recursion_shield_on();
  OTF2_EvtWriter_IoDestroyHandle(writer(), NULL, ezt_get_timestamp(), handle);
  set_recursion_shield_off();
}
