// SPDX-License-Identifier: GPL-2.0-only
// Writing the module's events with EZTrace's event writer and clock.
#include "../ezt_record_common.h"
#include "ezt_hdf5.h"

// HDF5 may call its own public API (the high-level library always does): only the outermost
// wrapped call is recorded.
static __thread int depth __attribute__((tls_model("initial-exec")));
static int can_record(void) { return ezt_can_record(); }
static OTF2_EvtWriter* writer(void) { return ezt_writer(); }

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

// NULL when there is nothing to say.
static OTF2_AttributeList* attributes(const struct hdf5_describe* d) {
  if (!d || (d->object == OTF2_UNDEFINED_STRING && d->layout == HDF5_LAYOUT_NONE && d->xfer < 0))
    return NULL;
  OTF2_AttributeList* list = ezt_thread_attributes();
  if (!list) return NULL;
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
                   OTF2_IoOperationFlag flags, uint64_t bytes,
                   const struct hdf5_describe* describe) {
  if (call->region < 0 || !can_record()) return;
  call->handle = handle;
  call->bytes = bytes;
  call->matching_id = ezt_matching_id();
  set_recursion_shield_on();
  OTF2_AttributeList* list = attributes(describe);
  uint64_t t = ezt_get_timestamp();
  OTF2_EvtWriter_Enter(writer(), NULL, t, (OTF2_RegionRef)call->region);
  OTF2_EvtWriter_IoOperationBegin(writer(), list, t, handle, mode, flags, bytes, call->matching_id);
  call->entered = 1;
  set_recursion_shield_off();
}

// The path is the handle's name and the transfer mode its flag: a transfer writes no attribute
// but the layout, once per handle.
void hdf5_transfer_begin(struct hdf5_call* call, const struct hdf5_object* o,
                         OTF2_IoOperationMode mode, int collective, uint64_t bytes) {
  OTF2_IoOperationFlag flags =
      collective ? OTF2_IO_OPERATION_FLAG_COLLECTIVE : OTF2_IO_OPERATION_FLAG_NONE;
  if (o->object_handle == OTF2_UNDEFINED_IO_HANDLE) {
    struct hdf5_describe d = {o->name, o->layout, o->chunk_bytes, collective};
    hdf5_io_begin(call, o->handle, mode, flags, bytes, &d);
    return;
  }
  struct hdf5_describe layout = {OTF2_UNDEFINED_STRING, o->layout, o->chunk_bytes, -1};
  int announce = o->layout != HDF5_LAYOUT_NONE && hdf5_object_announce(o->object_handle);
  hdf5_io_begin(call, o->object_handle, mode, flags, bytes, announce ? &layout : NULL);
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
