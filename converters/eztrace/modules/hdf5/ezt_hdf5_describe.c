// SPDX-License-Identifier: GPL-2.0-only
// Describing objects: their path in the file and a dataset's layout.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

#include "ezt_hdf5.h"

// Appends the parts of `name` ('/'-separated; empty and "." parts name nothing) to path.
static size_t append_parts(char* path, size_t at, const char* name) {
  while (name && *name) {
    const char* end = strchr(name, '/');
    size_t n = end ? (size_t)(end - name) : strlen(name);
    if (n && !(n == 1 && name[0] == '.')) {
      path[at++] = '/';
      memcpy(path + at, name, n);
      at += n;
    }
    name = end ? end + 1 : NULL;
  }
  return at;
}

void hdf5_join_path(char* path, const char* base, const char* name, const char* attribute) {
  size_t at = append_parts(path, 0, base);
  at = append_parts(path, at, name);
  if (!at) path[at++] = '/';
  if (attribute) {
    path[at++] = '@';
    strcpy(path + at, attribute);
  } else {
    path[at] = '\0';
  }
}

int hdf5_layout_of(hid_t dcpl, hid_t type, uint64_t* chunk_bytes) {
  const struct hdf5_api* h5 = hdf5_api();
  *chunk_bytes = 0;
  if (dcpl == H5P_DEFAULT) return H5D_CONTIGUOUS;
  if (!h5->Pget_layout) return HDF5_LAYOUT_NONE;
  H5D_layout_t layout = h5->Pget_layout(dcpl);
  if (layout < H5D_COMPACT || layout > H5D_VIRTUAL) return HDF5_LAYOUT_NONE;
  if (layout == H5D_CHUNKED && type >= 0) {
    hsize_t dims[H5S_MAX_RANK];
    int rank = h5->Pget_chunk(dcpl, H5S_MAX_RANK, dims);
    uint64_t bytes = h5->Tget_size(type);
    for (int i = 0; i < rank; i++) bytes *= dims[i];
    *chunk_bytes = rank > 0 ? bytes : 0;
  }
  return (int)layout;
}

uint64_t hdf5_points_of_space(hid_t space) {
  const struct hdf5_api* h5 = hdf5_api();
  hssize_t n = h5->Sget_select_npoints ? h5->Sget_select_npoints(space) : -1;
  return n > 0 ? (uint64_t)n : 0;
}

// Ids HDF5 gives a meaning of their own in place of a dataspace.
static int special_space(hid_t space) { return space >= 0 && space <= 2; }

uint64_t hdf5_points(hid_t dataset, hid_t mem_space, hid_t file_space) {
  if (!special_space(mem_space)) return hdf5_space_points(mem_space);
  if (!special_space(file_space)) return hdf5_space_points(file_space);
  const struct hdf5_api* h5 = hdf5_api();
  hid_t space = h5->Dget_space ? h5->Dget_space(dataset) : -1;
  if (space < 0) return 0;
  uint64_t n = hdf5_points_of_space(space);
  h5->Sclose(space);
  return n;
}

int hdf5_xfer_collective(hid_t dxpl) {
  const struct hdf5_api* h5 = hdf5_api();
  int mode = 0;  // H5FD_MPIO_INDEPENDENT
  // H5P_DEFAULT is independent, and serial HDF5 has no collective I/O.
  if (dxpl == H5P_DEFAULT || !h5->Pget_dxpl_mpio) return 0;
  return h5->Pget_dxpl_mpio(dxpl, &mode) >= 0 && mode == 1;
}

// HDF5's predefined native types cannot be changed (H5Tset_size fails on them): their sizes are
// read once, which spares most transfers an API call. Their ids are the library's globals.
static const char* const native_types[] = {
    "H5T_NATIVE_SCHAR_g",   "H5T_NATIVE_UCHAR_g",  "H5T_NATIVE_SHORT_g",  "H5T_NATIVE_USHORT_g",
    "H5T_NATIVE_INT_g",     "H5T_NATIVE_UINT_g",   "H5T_NATIVE_LONG_g",   "H5T_NATIVE_ULONG_g",
    "H5T_NATIVE_LLONG_g",   "H5T_NATIVE_ULLONG_g", "H5T_NATIVE_FLOAT_g",  "H5T_NATIVE_DOUBLE_g",
    "H5T_NATIVE_LDOUBLE_g", "H5T_NATIVE_INT8_g",   "H5T_NATIVE_UINT8_g",  "H5T_NATIVE_INT16_g",
    "H5T_NATIVE_UINT16_g",  "H5T_NATIVE_INT32_g",  "H5T_NATIVE_UINT32_g", "H5T_NATIVE_INT64_g",
    "H5T_NATIVE_UINT64_g",  "H5T_NATIVE_HSIZE_g",  "H5T_NATIVE_HBOOL_g",  "H5T_NATIVE_B8_g",
};
enum { kNativeTypes = sizeof native_types / sizeof *native_types };
static hid_t native_id[kNativeTypes];
static size_t native_size[kNativeTypes];
static pthread_once_t natives_once = PTHREAD_ONCE_INIT;

// At the first transfer: the library is initialized by then (a dataset or attribute is open).
// The global in use is the first definition (a program that names H5T_NATIVE_INT has its own copy,
// which libhdf5 uses too), else libhdf5's own where it was loaded RTLD_LOCAL.
static void read_natives(void) {
  const struct hdf5_api* h5 = hdf5_api();
  for (int i = 0; i < kNativeTypes; i++) {
    const hid_t* id = dlsym(RTLD_DEFAULT, native_types[i]);
    if (!id) id = hdf5_real_symbol(native_types[i]);
    native_id[i] = id && *id > 0 && h5->Tget_size ? *id : -1;
    native_size[i] = native_id[i] > 0 ? h5->Tget_size(native_id[i]) : 0;
  }
}

uint64_t hdf5_type_size(hid_t type) {
  // The thread's last native type: transfers mostly repeat one.
  static __thread hid_t last_id __attribute__((tls_model("initial-exec")));
  static __thread size_t last_size __attribute__((tls_model("initial-exec")));
  if (type == last_id && type > 0) return last_size;
  pthread_once(&natives_once, read_natives);
  for (int i = 0; i < kNativeTypes; i++) {
    if (native_id[i] == type) {
      last_id = type, last_size = native_size[i];
      return last_size;
    }
  }
  const struct hdf5_api* h5 = hdf5_api();
  return h5->Tget_size ? h5->Tget_size(type) : 0;
}
