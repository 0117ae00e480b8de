// SPDX-License-Identifier: GPL-2.0-only
// Datasets: created and opened with their path and layout, read and written as I/O operations.
#include "ezt_hdf5.h"

// A dataset created or opened while recording: kept, so that its transfers are described
// without asking HDF5 again.
static void remember(hid_t dataset, const struct hdf5_describe* d) {
  struct hdf5_object o = {d->object, hdf5_handle_of_object(dataset), d->layout, d->chunk_bytes,
                          0,         OTF2_UNDEFINED_IO_HANDLE};
  hdf5_object_put(dataset, &o);
}

static hid_t created(struct hdf5_call* call, hid_t dataset, const struct hdf5_describe* d) {
  if (dataset >= 0 && call->region >= 0) remember(dataset, d);
  hdf5_leave(call, NULL);
  return dataset;
}

static struct hdf5_describe to_create(hid_t loc_id, const char* name, hid_t type_id,
                                      hid_t dcpl_id) {
  struct hdf5_describe d = HDF5_DESCRIBE_NONE;
  if (!hdf5_will_record()) return d;
  if (name) d.object = hdf5_path_of(loc_id, name, NULL);
  d.layout = hdf5_layout_of(dcpl_id, type_id, &d.chunk_bytes);
  return d;
}

hid_t H5Dcreate2(hid_t loc_id, const char* name, hid_t type_id, hid_t space_id, hid_t lcpl_id,
                 hid_t dcpl_id, hid_t dapl_id) {
  static int region = -1;
  HDF5_REAL(H5Dcreate2);
  struct hdf5_call call;
  struct hdf5_describe d = to_create(loc_id, name, type_id, dcpl_id);
  hdf5_enter(&call, &region, __func__, &d);
  return created(&call, real_H5Dcreate2(loc_id, name, type_id, space_id, lcpl_id, dcpl_id, dapl_id),
                 &d);
}

hid_t H5Dcreate_anon(hid_t loc_id, hid_t type_id, hid_t space_id, hid_t dcpl_id, hid_t dapl_id) {
  static int region = -1;
  HDF5_REAL(H5Dcreate_anon);
  struct hdf5_call call;
  struct hdf5_describe d = to_create(loc_id, NULL, type_id, dcpl_id);
  hdf5_enter(&call, &region, __func__, &d);
  return created(&call, real_H5Dcreate_anon(loc_id, type_id, space_id, dcpl_id, dapl_id), &d);
}

// The layout is known once the dataset is open: it goes on the LEAVE.
hid_t H5Dopen2(hid_t loc_id, const char* name, hid_t dapl_id) {
  static int region = -1;
  HDF5_REAL(H5Dopen2);
  struct hdf5_call call;
  struct hdf5_describe d = HDF5_DESCRIBE_NONE;
  if (hdf5_will_record()) d.object = hdf5_path_of(loc_id, name, NULL);
  hdf5_enter(&call, &region, __func__, &d);
  hid_t dataset = real_H5Dopen2(loc_id, name, dapl_id);
  struct hdf5_describe layout = HDF5_DESCRIBE_NONE;
  if (dataset >= 0 && call.region >= 0) {
    struct hdf5_object o;
    hdf5_object_get(dataset, 0, &o);
    if (d.object != OTF2_UNDEFINED_STRING) o.name = d.object;  // the path it was opened by
    hdf5_object_put(dataset, &o);
    layout.layout = o.layout;
    layout.chunk_bytes = o.chunk_bytes;
  }
  hdf5_leave(&call, &layout);
  return dataset;
}

herr_t H5Dclose(hid_t dset_id) {
  static int region = -1;
  HDF5_REAL(H5Dclose);
  struct hdf5_call call;
  hdf5_enter(&call, &region, __func__, NULL);
  herr_t rc = real_H5Dclose(dset_id);
  if (rc >= 0) hdf5_object_forget(dset_id);
  hdf5_leave(&call, NULL);
  return rc;
}

static void transfer_begin(struct hdf5_call* call, OTF2_IoOperationMode mode, hid_t dset_id,
                           hid_t mem_type_id, hid_t mem_space_id, hid_t file_space_id,
                           hid_t dxpl_id) {
  struct hdf5_object o;
  hdf5_object_get(dset_id, 0, &o);
  uint64_t bytes = hdf5_points(dset_id, mem_space_id, file_space_id) * hdf5_type_size(mem_type_id);
  hdf5_transfer_begin(call, &o, mode, hdf5_xfer_collective(dxpl_id), bytes);
}

herr_t H5Dread(hid_t dset_id, hid_t mem_type_id, hid_t mem_space_id, hid_t file_space_id,
               hid_t dxpl_id, void* buf) {
  static int region = -1;
  HDF5_REAL(H5Dread);
  struct hdf5_call call;
  if (hdf5_enter_io(&call, &region, __func__))
    transfer_begin(&call, OTF2_IO_OPERATION_MODE_READ, dset_id, mem_type_id, mem_space_id,
                   file_space_id, dxpl_id);
  herr_t rc = real_H5Dread(dset_id, mem_type_id, mem_space_id, file_space_id, dxpl_id, buf);
  hdf5_io_end(&call, rc >= 0);
  return rc;
}

herr_t H5Dwrite(hid_t dset_id, hid_t mem_type_id, hid_t mem_space_id, hid_t file_space_id,
                hid_t dxpl_id, const void* buf) {
  static int region = -1;
  HDF5_REAL(H5Dwrite);
  struct hdf5_call call;
  if (hdf5_enter_io(&call, &region, __func__))
    transfer_begin(&call, OTF2_IO_OPERATION_MODE_WRITE, dset_id, mem_type_id, mem_space_id,
                   file_space_id, dxpl_id);
  herr_t rc = real_H5Dwrite(dset_id, mem_type_id, mem_space_id, file_space_id, dxpl_id, buf);
  hdf5_io_end(&call, rc >= 0);
  return rc;
}

herr_t H5Dset_extent(hid_t dset_id, const hsize_t size[]) {
  static int region = -1;
  HDF5_REAL(H5Dset_extent);
  struct hdf5_call call;
  hdf5_enter(&call, &region, __func__, NULL);
  herr_t rc = real_H5Dset_extent(dset_id, size);
  hdf5_leave(&call, NULL);
  return rc;
}
