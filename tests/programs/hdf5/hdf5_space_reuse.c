// SPDX-License-Identifier: GPL-2.0-only
/* One memory dataspace reused by every H5Dwrite, its selection or extent changed in place between
 * them by each public function that can (the hdf5 module keeps a space's count of points until it
 * changes: tests/e2e/hdf5, "SpaceChangedInPlace"). hdf5_space_reuse DIR writes DIR/reuse.h5's
 * dataset /v of 16 ints, the file selection always the first N elements, N (the bytes / 4) in
 * order: 2 (hyperslab), 5 (hyperslab), 16 (all), 3 (elements), 0 (none), 4 (set_extent_simple),
 * 6 (extent_copy), 7 (select_copy), 9 (modify_select: 7 OR 2 more), 4 (closed, then a new space).
 */
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>

static int ints[16];

static void check(herr_t rc, const char* what) {
  if (rc < 0) {
    fprintf(stderr, "hdf5_space_reuse: %s failed\n", what);
    exit(1);
  }
}

static hsize_t sel(hid_t space, hsize_t n) {
  hsize_t zero = 0;
  check(
      n ? H5Sselect_hyperslab(space, H5S_SELECT_SET, &zero, NULL, &n, NULL) : H5Sselect_none(space),
      "select");
  return n;
}

// The file selection: the first n elements, as many as the memory selection.
static void write_n(hid_t d, hid_t mem, hid_t file, hsize_t n) {
  sel(file, n);
  check(H5Dwrite(d, H5T_NATIVE_INT, mem, file, H5P_DEFAULT, ints), "H5Dwrite");
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: hdf5_space_reuse DIR\n");
    return 2;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/reuse.h5", argv[1]);
  hsize_t n16 = 16, n6 = 6, n4 = 4, coords[3] = {1, 5, 9};
  hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  hid_t file = H5Screate_simple(1, &n16, NULL), mem = H5Screate_simple(1, &n16, NULL);
  hid_t d = H5Dcreate2(f, "v", H5T_NATIVE_INT, file, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  check(f < 0 || d < 0 ? -1 : 0, "create");
  write_n(d, mem, file, sel(mem, 2));
  write_n(d, mem, file, sel(mem, 5));
  check(H5Sselect_all(mem), "all");
  write_n(d, mem, file, 16);
  // An "all" selection follows the extent.
  check(H5Sset_extent_simple(mem, 1, &n4, NULL), "set_extent_simple");
  write_n(d, mem, file, 4);
  hid_t six = H5Screate_simple(1, &n6, NULL);
  check(H5Sextent_copy(mem, six), "extent_copy");
  write_n(d, mem, file, 6);
  check(H5Sset_extent_simple(mem, 1, &n16, NULL), "set_extent_simple 16");
  check(H5Sselect_elements(mem, H5S_SELECT_SET, 3, coords), "elements");
  write_n(d, mem, file, 3);
  check(H5Sselect_none(mem), "none");
  write_n(d, mem, file, 0);
  hid_t seven = H5Screate_simple(1, &n16, NULL), two = H5Screate_simple(1, &n16, NULL);
  hsize_t at = 10, count = 2;
  sel(seven, 7);
  check(H5Sselect_hyperslab(two, H5S_SELECT_SET, &at, NULL, &count, NULL), "select two");
  check(H5Sselect_copy(mem, seven), "select_copy");
  write_n(d, mem, file, 7);
  check(H5Smodify_select(mem, H5S_SELECT_OR, two), "modify_select");
  write_n(d, mem, file, 9);
  check(H5Sclose(mem), "close");
  mem = H5Screate_simple(1, &n4, NULL);
  write_n(d, mem, file, 4);
  H5Sclose(mem);
  H5Sclose(six);
  H5Sclose(seven);
  H5Sclose(two);
  H5Sclose(file);
  H5Dclose(d);
  return H5Fclose(f) < 0;
}
