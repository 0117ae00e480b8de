// SPDX-License-Identifier: GPL-2.0-only
/* The serial HDF5 workload of the hdf5 module's test (tests/e2e/hdf5). Usage: hdf5_serial DIR.
 * Writes DIR/serial.h5, then reads it back; every call the test counts is made here, with the
 * sizes below (the test asserts them):
 *   create: file; group /g; datasets /g/temperature (contiguous, BIG_INTS ints, written in 4
 *     hyperslabs of QUARTER ints), /g/chunked (ROWS x COLS doubles in CHUNK x CHUNK chunks, its
 *     chunk cache off: chunks are written during H5Dwrite; one H5Dwrite, H5S_ALL), /compact
 *     (COMPACT_SHORTS shorts, H5S_ALL), /g/series (chunked, extendable: SERIES ints, set_extent to
 *     2 x SERIES, SERIES more), /g/small (contiguous, SMALL_INTS ints written in 2 halves), one
 *     anonymous dataset (ANON_INTS ints, H5S_ALL); a write that fails (memory selection of
 *     FAIL_POINTS points against a file selection of twice as many); attributes
 *     /g/temperature@units (UNITS_INTS ints, H5Acreate2) and /g@version (one int,
 *     H5Acreate_by_name); H5Fflush.
 *   read: the file, /g, /g/temperature (all), /g/chunked (rows 0..CHUNK-1), /compact (all),
 *     @units (H5Aopen), /g@version (H5Aopen_by_name).
 * HDF5's error printing is off around the failing write only. */
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>

#define BIG_INTS (4 * 32768)
#define QUARTER (BIG_INTS / 4)
#define ROWS 64
#define COLS 64
#define CHUNK 16
#define COMPACT_SHORTS 100
#define SERIES 256
#define SMALL_INTS 1024
#define ANON_INTS 64
#define FAIL_POINTS 10
#define UNITS_INTS 3

static void check(long long rc, const char* what) {
  if (rc < 0) {
    fprintf(stderr, "hdf5_serial: %s failed\n", what);
    exit(1);
  }
}

static hid_t space1(hsize_t n, hsize_t max) { return H5Screate_simple(1, &n, &max); }

static void write_part(hid_t dset, hsize_t start, hsize_t count, const void* buf) {
  hid_t fspace = H5Dget_space(dset), mspace = space1(count, count);
  check(H5Sselect_hyperslab(fspace, H5S_SELECT_SET, &start, NULL, &count, NULL), "select");
  check(H5Dwrite(dset, H5T_NATIVE_INT, mspace, fspace, H5P_DEFAULT, buf), "H5Dwrite part");
  H5Sclose(mspace);
  H5Sclose(fspace);
}

static void write_contiguous(hid_t g, int* ints) {
  hid_t space = space1(BIG_INTS, BIG_INTS);
  hid_t d =
      H5Dcreate2(g, "temperature", H5T_NATIVE_INT, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  check(d, "H5Dcreate2 temperature");
  for (int q = 0; q < 4; q++) write_part(d, (hsize_t)q * QUARTER, QUARTER, ints + q * QUARTER);
  /* A write that fails: FAIL_POINTS in memory, twice as many in the file. */
  hid_t fspace = H5Dget_space(d), mspace = space1(FAIL_POINTS, FAIL_POINTS);
  hsize_t start = 0, count = 2 * FAIL_POINTS;
  H5Sselect_hyperslab(fspace, H5S_SELECT_SET, &start, NULL, &count, NULL);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  if (H5Dwrite(d, H5T_NATIVE_INT, mspace, fspace, H5P_DEFAULT, ints) >= 0) check(-1, "failing");
  H5Eset_auto2(H5E_DEFAULT, (H5E_auto2_t)H5Eprint2, stderr);
  H5Sclose(mspace);
  H5Sclose(fspace);
  hid_t units = space1(UNITS_INTS, UNITS_INTS);
  hid_t a = H5Acreate2(d, "units", H5T_NATIVE_INT, units, H5P_DEFAULT, H5P_DEFAULT);
  check(H5Awrite(a, H5T_NATIVE_INT, ints), "H5Awrite units");
  check(H5Aclose(a), "H5Aclose");
  H5Sclose(units);
  check(H5Dclose(d), "H5Dclose temperature");
  H5Sclose(space);
}

static void write_chunked(hid_t g, double* doubles) {
  hsize_t dims[2] = {ROWS, COLS}, chunk[2] = {CHUNK, CHUNK};
  hid_t space = H5Screate_simple(2, dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
  hid_t dapl = H5Pcreate(H5P_DATASET_ACCESS);
  H5Pset_chunk(dcpl, 2, chunk);
  H5Pset_chunk_cache(dapl, 0, 0, 1.0); /* no chunk cache: each chunk is written in H5Dwrite */
  hid_t d = H5Dcreate2(g, "chunked", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, dcpl, dapl);
  check(d, "H5Dcreate2 chunked");
  check(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, doubles), "H5Dwrite chunked");
  check(H5Dclose(d), "H5Dclose chunked");
  H5Pclose(dapl);
  H5Pclose(dcpl);
  H5Sclose(space);
}

static void write_others(hid_t f, hid_t g, int* ints) {
  hid_t space = space1(COMPACT_SHORTS, COMPACT_SHORTS), dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_layout(dcpl, H5D_COMPACT);
  hid_t d = H5Dcreate2(f, "/compact", H5T_NATIVE_SHORT, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  check(H5Dwrite(d, H5T_NATIVE_SHORT, H5S_ALL, H5S_ALL, H5P_DEFAULT, ints), "H5Dwrite compact");
  check(H5Dclose(d), "H5Dclose compact");
  H5Pclose(dcpl);
  H5Sclose(space);

  hsize_t chunk = SERIES, two = 2 * SERIES;
  space = space1(SERIES, H5S_UNLIMITED);
  dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 1, &chunk);
  d = H5Dcreate2(g, "series", H5T_NATIVE_INT, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  write_part(d, 0, SERIES, ints);
  check(H5Dset_extent(d, &two), "H5Dset_extent");
  write_part(d, SERIES, SERIES, ints);
  check(H5Dclose(d), "H5Dclose series");
  H5Pclose(dcpl);
  H5Sclose(space);

  space = space1(SMALL_INTS, SMALL_INTS);
  d = H5Dcreate2(g, "small", H5T_NATIVE_INT, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  write_part(d, 0, SMALL_INTS / 2, ints);
  write_part(d, SMALL_INTS / 2, SMALL_INTS / 2, ints);
  check(H5Dclose(d), "H5Dclose small");
  H5Sclose(space);

  space = space1(ANON_INTS, ANON_INTS);
  d = H5Dcreate_anon(f, H5T_NATIVE_INT, space, H5P_DEFAULT, H5P_DEFAULT);
  check(H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, ints), "H5Dwrite anon");
  check(H5Dclose(d), "H5Dclose anon");
  H5Sclose(space);

  hid_t scalar = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate_by_name(f, "g", "version", H5T_NATIVE_INT, scalar, H5P_DEFAULT, H5P_DEFAULT,
                              H5P_DEFAULT);
  check(H5Awrite(a, H5T_NATIVE_INT, ints), "H5Awrite version");
  check(H5Aclose(a), "H5Aclose version");
  H5Sclose(scalar);
}

static void read_back(const char* path, int* ints, double* doubles) {
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  check(f, "H5Fopen");
  hid_t g = H5Gopen2(f, "g", H5P_DEFAULT);
  hid_t d = H5Dopen2(g, "temperature", H5P_DEFAULT);
  check(H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, ints), "H5Dread temperature");
  hid_t a = H5Aopen(d, "units", H5P_DEFAULT);
  check(H5Aread(a, H5T_NATIVE_INT, ints), "H5Aread units");
  H5Aclose(a);
  H5Dclose(d);
  d = H5Dopen2(f, "/g/chunked", H5P_DEFAULT);
  hsize_t start[2] = {0, 0}, count[2] = {CHUNK, COLS};
  hid_t fspace = H5Dget_space(d), mspace = H5Screate_simple(2, count, NULL);
  H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL);
  check(H5Dread(d, H5T_NATIVE_DOUBLE, mspace, fspace, H5P_DEFAULT, doubles), "H5Dread chunked");
  H5Sclose(mspace);
  H5Sclose(fspace);
  H5Dclose(d);
  d = H5Dopen2(f, "compact", H5P_DEFAULT);
  check(H5Dread(d, H5T_NATIVE_SHORT, H5S_ALL, H5S_ALL, H5P_DEFAULT, ints), "H5Dread compact");
  H5Dclose(d);
  a = H5Aopen_by_name(f, "/g", "version", H5P_DEFAULT, H5P_DEFAULT);
  check(H5Aread(a, H5T_NATIVE_INT, ints), "H5Aread version");
  H5Aclose(a);
  H5Gclose(g);
  check(H5Fclose(f), "H5Fclose read");
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: hdf5_serial DIR\n");
    return 2;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/serial.h5", argv[1]);
  int* ints = calloc(BIG_INTS, sizeof *ints);
  double* doubles = calloc(ROWS * COLS, sizeof *doubles);
  for (int i = 0; i < BIG_INTS; i++) ints[i] = i;
  for (int i = 0; i < ROWS * COLS; i++) doubles[i] = i * 0.5;

  hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  check(f, "H5Fcreate");
  hid_t g = H5Gcreate2(f, "g", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  write_contiguous(g, ints);
  write_chunked(g, doubles);
  write_others(f, g, ints);
  check(H5Gclose(g), "H5Gclose");
  check(H5Fflush(f, H5F_SCOPE_GLOBAL), "H5Fflush");
  check(H5Fclose(f), "H5Fclose");
  read_back(path, ints, doubles);
  free(ints);
  free(doubles);
  printf("hdf5_serial done\n");
  return 0;
}
