// SPDX-License-Identifier: GPL-2.0-only
// Files (one IoHandle per H5Fcreate/H5Fopen) and groups (regions only).
#include "ezt_hdf5.h"

static struct hdf5_describe root_object(void) {
  struct hdf5_describe d = HDF5_DESCRIBE_NONE;
  if (hdf5_will_record()) d.object = hdf5_string("/");
  return d;
}

static hid_t file_opened(struct hdf5_call* call, hid_t file, const char* path, unsigned flags,
                         int created) {
  if (file >= 0) hdf5_handle_created(call, hdf5_handle_new(file, path), flags, created);
  hdf5_leave(call, NULL);
  return file;
}

hid_t H5Fcreate(const char* filename, unsigned flags, hid_t fcpl_id, hid_t fapl_id) {
  static int region = -1;
  HDF5_REAL(H5Fcreate);
  struct hdf5_call call;
  struct hdf5_describe d = root_object();
  hdf5_enter(&call, &region, __func__, &d);
  return file_opened(&call, real_H5Fcreate(filename, flags, fcpl_id, fapl_id), filename, flags, 1);
}

hid_t H5Fopen(const char* filename, unsigned flags, hid_t fapl_id) {
  static int region = -1;
  HDF5_REAL(H5Fopen);
  struct hdf5_call call;
  struct hdf5_describe d = root_object();
  hdf5_enter(&call, &region, __func__, &d);
  return file_opened(&call, real_H5Fopen(filename, flags, fapl_id), filename, flags, 0);
}

herr_t H5Fclose(hid_t file_id) {
  static int region = -1;
  HDF5_REAL(H5Fclose);
  struct hdf5_call call;
  hdf5_enter(&call, &region, __func__, NULL);
  OTF2_IoHandleRef handle = hdf5_handle_of_file(file_id);
  herr_t rc = real_H5Fclose(file_id);
  if (rc >= 0) {
    hdf5_handle_destroyed(&call, handle);
    hdf5_handle_forget(file_id);
  }
  hdf5_leave(&call, NULL);
  return rc;
}

herr_t H5Fflush(hid_t object_id, H5F_scope_t scope) {
  static int region = -1;
  HDF5_REAL(H5Fflush);
  struct hdf5_call call;
  if (hdf5_enter_io(&call, &region, __func__)) {
    struct hdf5_describe d = HDF5_DESCRIBE_NONE;
    d.object = hdf5_path_of(object_id, NULL, NULL);
    hdf5_io_begin(&call, hdf5_handle_of_object(object_id), OTF2_IO_OPERATION_MODE_FLUSH,
                  OTF2_IO_OPERATION_FLAG_NONE, 0, &d);
  }
  herr_t rc = real_H5Fflush(object_id, scope);
  hdf5_io_end(&call, rc >= 0);
  return rc;
}

static struct hdf5_describe named(hid_t loc_id, const char* name) {
  struct hdf5_describe d = HDF5_DESCRIBE_NONE;
  if (hdf5_will_record()) d.object = hdf5_path_of(loc_id, name, NULL);
  return d;
}

hid_t H5Gcreate2(hid_t loc_id, const char* name, hid_t lcpl_id, hid_t gcpl_id, hid_t gapl_id) {
  static int region = -1;
  HDF5_REAL(H5Gcreate2);
  struct hdf5_call call;
  struct hdf5_describe d = named(loc_id, name);
  hdf5_enter(&call, &region, __func__, &d);
  hid_t group = real_H5Gcreate2(loc_id, name, lcpl_id, gcpl_id, gapl_id);
  hdf5_leave(&call, NULL);
  return group;
}

hid_t H5Gopen2(hid_t loc_id, const char* name, hid_t gapl_id) {
  static int region = -1;
  HDF5_REAL(H5Gopen2);
  struct hdf5_call call;
  struct hdf5_describe d = named(loc_id, name);
  hdf5_enter(&call, &region, __func__, &d);
  hid_t group = real_H5Gopen2(loc_id, name, gapl_id);
  hdf5_leave(&call, NULL);
  return group;
}

herr_t H5Gclose(hid_t group_id) {
  static int region = -1;
  HDF5_REAL(H5Gclose);
  struct hdf5_call call;
  hdf5_enter(&call, &region, __func__, NULL);
  herr_t rc = real_H5Gclose(group_id);
  hdf5_leave(&call, NULL);
  return rc;
}
