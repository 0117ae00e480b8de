// SPDX-License-Identifier: GPL-2.0-only
/* Many small H5Dwrite calls, timed (bench/hdf5): hdf5_small_writes DIR N writes one int at a time
 * into element i of a contiguous dataset of N ints in DIR/small.h5 (HDF5's sieve buffer gathers
 * them: few reach the file), and prints the mean wall and CPU (this thread's: steadier on a shared
 * host) time per H5Dwrite, selection included:
 *   calls=N ns_per_call=X cpu_ns_per_call=Y */
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long long now_ns(clockid_t clock) {
  struct timespec t;
  clock_gettime(clock, &t);
  return t.tv_sec * 1000000000ll + t.tv_nsec;
}

int main(int argc, char** argv) {
  if (argc != 3 || atol(argv[2]) <= 0) {
    fprintf(stderr, "usage: hdf5_small_writes DIR N\n");
    return 2;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/small.h5", argv[1]);
  hsize_t n = (hsize_t)atol(argv[2]), one = 1;
  hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  hid_t space = H5Screate_simple(1, &n, NULL), mem = H5Screate_simple(1, &one, NULL);
  hid_t d = H5Dcreate2(f, "values", H5T_NATIVE_INT, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (f < 0 || d < 0) return 1;
  long long t0 = now_ns(CLOCK_MONOTONIC), c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
  for (hsize_t i = 0; i < n; i++) {
    int v = (int)i;
    H5Sselect_hyperslab(space, H5S_SELECT_SET, &i, NULL, &one, NULL);
    if (H5Dwrite(d, H5T_NATIVE_INT, mem, space, H5P_DEFAULT, &v) < 0) return 1;
  }
  long long t1 = now_ns(CLOCK_MONOTONIC), c1 = now_ns(CLOCK_THREAD_CPUTIME_ID);
  H5Dclose(d);
  H5Sclose(mem);
  H5Sclose(space);
  H5Fclose(f);
  printf("calls=%llu ns_per_call=%.1f cpu_ns_per_call=%.1f\n", (unsigned long long)n,
         (double)(t1 - t0) / (double)n, (double)(c1 - c0) / (double)n);
  return 0;
}
