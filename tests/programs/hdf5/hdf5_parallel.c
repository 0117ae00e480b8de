// SPDX-License-Identifier: GPL-2.0-only
/* The parallel HDF5 workload of the hdf5 module's test (tests/e2e/hdf5): 2 ranks share
 * DIR/parallel.h5 through HDF5's MPI-IO driver (MPICH). Usage: mpiexec -np 2 hdf5_parallel DIR.
 * Every rank, in this order (the test asserts the counts and sizes):
 *   H5Fcreate; /coll (contiguous, 2 x PART ints): rank's PART ints written collectively
 *   (H5Pset_dxpl_mpio COLLECTIVE); /indep (contiguous): PART ints written independently (a plist
 *   that says INDEPENDENT); /chunked (chunks of CHUNK ints): PART ints collectively; attribute
 *   /coll@ranks (one int, every rank writes it: metadata is collective); H5Dread of its PART
 *   ints of /coll, collectively; closes; H5Fclose. */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../mpi_two_ranks.h"

#define PART 65536
#define CHUNK (PART / 4)

static void check(long long rc, const char* what) {
  if (rc < 0) {
    fprintf(stderr, "hdf5_parallel: %s failed\n", what);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

static hid_t dataset(hid_t f, const char* name, hid_t space, hsize_t chunk) {
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  if (chunk) H5Pset_chunk(dcpl, 1, &chunk);
  hid_t d = H5Dcreate2(f, name, H5T_NATIVE_INT, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  check(d, name);
  H5Pclose(dcpl);
  return d;
}

// The rank's PART ints of d, moved with dxpl.
static void transfer(hid_t d, int rank, hid_t dxpl, int* buf, int write) {
  hsize_t start = (hsize_t)rank * PART, count = PART;
  hid_t fspace = H5Dget_space(d), mspace = H5Screate_simple(1, &count, NULL);
  check(H5Sselect_hyperslab(fspace, H5S_SELECT_SET, &start, NULL, &count, NULL), "select");
  if (write)
    check(H5Dwrite(d, H5T_NATIVE_INT, mspace, fspace, dxpl, buf), "H5Dwrite");
  else
    check(H5Dread(d, H5T_NATIVE_INT, mspace, fspace, dxpl, buf), "H5Dread");
  H5Sclose(mspace);
  H5Sclose(fspace);
}

int main(int argc, char** argv) {
  const char* dir = NULL;
  const int rank = mpi_two_ranks_start(&argc, &argv, "hdf5_parallel", &dir);
  char path[4096];
  snprintf(path, sizeof path, "%s/parallel.h5", dir);
  int* buf = malloc(PART * sizeof *buf);
  for (int i = 0; i < PART; i++) buf[i] = rank * PART + i;

  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
  hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  check(f, "H5Fcreate");
  hid_t coll = H5Pcreate(H5P_DATASET_XFER), indep = H5Pcreate(H5P_DATASET_XFER);
  H5Pset_dxpl_mpio(coll, H5FD_MPIO_COLLECTIVE);
  H5Pset_dxpl_mpio(indep, H5FD_MPIO_INDEPENDENT);
  hsize_t total = 2 * PART;
  hid_t space = H5Screate_simple(1, &total, NULL);

  hid_t d = dataset(f, "coll", space, 0);
  transfer(d, rank, coll, buf, 1);
  hid_t d2 = dataset(f, "indep", space, 0);
  transfer(d2, rank, indep, buf, 1);
  hid_t d3 = dataset(f, "chunked", space, CHUNK);
  transfer(d3, rank, coll, buf, 1);
  hid_t scalar = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(d, "ranks", H5T_NATIVE_INT, scalar, H5P_DEFAULT, H5P_DEFAULT);
  const int ranks = 2;
  check(H5Awrite(a, H5T_NATIVE_INT, &ranks), "H5Awrite");
  check(H5Aclose(a), "H5Aclose");
  transfer(d, rank, coll, buf, 0);
  for (int i = 0; i < PART; i++) check(buf[i] == rank * PART + i ? 0 : -1, "read back");
  H5Dclose(d3);
  H5Dclose(d2);
  H5Dclose(d);
  H5Sclose(scalar);
  H5Sclose(space);
  H5Pclose(coll);
  H5Pclose(indep);
  check(H5Fclose(f), "H5Fclose");
  H5Pclose(fapl);
  free(buf);
  printf("rank=%d pid=%d done\n", rank, (int)getpid());
  MPI_Finalize();
  return 0;
}
