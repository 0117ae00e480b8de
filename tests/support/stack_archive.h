// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// A synthetic archive of the HPC I/O stack (docs/analysis.md, "The stack above POSIX"): two MPI
// ranks, each a process of one thread, write one HDF5 dataset collectively. In the shapes our
// mpiio module and the hdf5 module write (docs/mpiio.md; docs/hdf5.md: IoParadigm "HDF5", regions
// named after the function, operations on the dataset's handle, a child of the file's).
#include <filesystem>

namespace ezio::test {

// Both ranks (processes "rank0 [200]" and "rank1 [201]", threads 1000 and 1001):
//   H5Fcreate [100, 600] containing MPI_File_open [200, 500]
//   H5Dwrite [1000, 9000] (COLLECTIVE, 4096 bytes, on the handle "/grid/temperature" whose
//     parent is the rank's file handle, hdf5.layout chunked, chunks of 4096 bytes)
//     containing MPI_File_write_at_all [1100, 8900] (COLLECTIVE, 4096 bytes, mpiio.offset
//     4096 × rank).
// Rank 0, the aggregator, inside its MPI_File_write_at_all: POSIX pwrite [2000, 3000] of 8192
// bytes containing syscall:pwrite64 [2100, 2900] of 8192 bytes at offset 0 (both ranks' data),
// call.id 77. Rank 1 makes no POSIX call. Device "block sda" writes 8192 bytes [4000, 5000],
// attributed to call.id 77.
// With `inverted`, rank 1 also makes an MPI_File_write [9500, 9900] inside a POSIX write
// [9400, 9950]: an upper layer inside a lower one.
std::filesystem::path write_stack_archive(const std::filesystem::path& dir, bool inverted = false);

}  // namespace ezio::test
