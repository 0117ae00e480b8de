// SPDX-License-Identifier: GPL-2.0-only
// Describing objects: their path in the file and a dataset's layout.
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
  if (!special_space(mem_space)) return hdf5_points_of_space(mem_space);
  if (!special_space(file_space)) return hdf5_points_of_space(file_space);
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
