// SPDX-License-Identifier: GPL-2.0-only
// Attributes: named `<object path>@<attribute name>`, read and written as I/O operations.
#include "ezt_hdf5.h"

static struct hdf5_describe to_open(hid_t loc_id, const char* obj_name, const char* attr_name) {
  struct hdf5_describe d = HDF5_DESCRIBE_NONE;
  if (hdf5_will_record()) d.object = hdf5_path_of(loc_id, obj_name, attr_name);
  return d;
}

// An attribute created or opened while recording is kept with its points (its dataspace is
// fixed), so that its transfers are described without asking HDF5 again. space_id: -1 to ask.
static hid_t opened(struct hdf5_call* call, hid_t attr, hid_t space_id,
                    const struct hdf5_describe* d) {
  if (attr >= 0 && call->region >= 0) {
    struct hdf5_object o;
    if (space_id >= 0) {
      o = (struct hdf5_object){d->object, hdf5_handle_of_object(attr),    HDF5_LAYOUT_NONE,
                               0,         hdf5_points_of_space(space_id), OTF2_UNDEFINED_IO_HANDLE};
    } else {
      hdf5_object_get(attr, 1, &o);
      if (d->object != OTF2_UNDEFINED_STRING) o.name = d->object;
    }
    hdf5_object_put(attr, &o);
  }
  hdf5_leave(call, NULL);
  return attr;
}

hid_t H5Acreate2(hid_t loc_id, const char* attr_name, hid_t type_id, hid_t space_id, hid_t acpl_id,
                 hid_t aapl_id) {
  static int region = -1;
  HDF5_REAL(H5Acreate2);
  struct hdf5_call call;
  struct hdf5_describe d = to_open(loc_id, NULL, attr_name);
  hdf5_enter(&call, &region, __func__, &d);
  return opened(&call, real_H5Acreate2(loc_id, attr_name, type_id, space_id, acpl_id, aapl_id),
                space_id, &d);
}

hid_t H5Acreate_by_name(hid_t loc_id, const char* obj_name, const char* attr_name, hid_t type_id,
                        hid_t space_id, hid_t acpl_id, hid_t aapl_id, hid_t lapl_id) {
  static int region = -1;
  HDF5_REAL(H5Acreate_by_name);
  struct hdf5_call call;
  struct hdf5_describe d = to_open(loc_id, obj_name, attr_name);
  hdf5_enter(&call, &region, __func__, &d);
  return opened(&call,
                real_H5Acreate_by_name(loc_id, obj_name, attr_name, type_id, space_id, acpl_id,
                                       aapl_id, lapl_id),
                space_id, &d);
}

hid_t H5Aopen(hid_t obj_id, const char* attr_name, hid_t aapl_id) {
  static int region = -1;
  HDF5_REAL(H5Aopen);
  struct hdf5_call call;
  struct hdf5_describe d = to_open(obj_id, NULL, attr_name);
  hdf5_enter(&call, &region, __func__, &d);
  return opened(&call, real_H5Aopen(obj_id, attr_name, aapl_id), -1, &d);
}

hid_t H5Aopen_by_name(hid_t loc_id, const char* obj_name, const char* attr_name, hid_t aapl_id,
                      hid_t lapl_id) {
  static int region = -1;
  HDF5_REAL(H5Aopen_by_name);
  struct hdf5_call call;
  struct hdf5_describe d = to_open(loc_id, obj_name, attr_name);
  hdf5_enter(&call, &region, __func__, &d);
  return opened(&call, real_H5Aopen_by_name(loc_id, obj_name, attr_name, aapl_id, lapl_id), -1, &d);
}

// Attributes have no transfer plist: their I/O is independent.
static void transfer_begin(struct hdf5_call* call, OTF2_IoOperationMode mode, hid_t attr_id,
                           hid_t mem_type_id) {
  struct hdf5_object o;
  hdf5_object_get(attr_id, 1, &o);
  uint64_t bytes = o.points * hdf5_type_size(mem_type_id);
  hdf5_transfer_begin(call, &o, mode, 0, bytes);
}

herr_t H5Aread(hid_t attr_id, hid_t type_id, void* buf) {
  static int region = -1;
  HDF5_REAL(H5Aread);
  struct hdf5_call call;
  if (hdf5_enter_io(&call, &region, __func__))
    transfer_begin(&call, OTF2_IO_OPERATION_MODE_READ, attr_id, type_id);
  herr_t rc = real_H5Aread(attr_id, type_id, buf);
  hdf5_io_end(&call, rc >= 0);
  return rc;
}

herr_t H5Awrite(hid_t attr_id, hid_t type_id, const void* buf) {
  static int region = -1;
  HDF5_REAL(H5Awrite);
  struct hdf5_call call;
  if (hdf5_enter_io(&call, &region, __func__))
    transfer_begin(&call, OTF2_IO_OPERATION_MODE_WRITE, attr_id, type_id);
  herr_t rc = real_H5Awrite(attr_id, type_id, buf);
  hdf5_io_end(&call, rc >= 0);
  return rc;
}

herr_t H5Aclose(hid_t attr_id) {
  static int region = -1;
  HDF5_REAL(H5Aclose);
  struct hdf5_call call;
  hdf5_enter(&call, &region, __func__, NULL);
  herr_t rc = real_H5Aclose(attr_id);
  if (rc >= 0) hdf5_object_forget(attr_id);
  hdf5_leave(&call, NULL);
  return rc;
}
