// SPDX-License-Identifier: GPL-2.0-only
#include "tests/unit/analysis/advise_hpc_cases.h"

namespace ezio::test {
namespace {

using Io = TraceBuilder::UserIo;
constexpr auto kCollective = OTF2_IO_OPERATION_FLAG_COLLECTIVE;

// An MPI-IO write of `bytes` at `offset` (-1: none said).
Io mpi(const char* name, uint64_t bytes, bool collective = false, int64_t offset = -1) {
  Io io;
  io.name = name;
  io.bytes = bytes;
  io.flags = collective ? kCollective : OTF2_IO_OPERATION_FLAG_NONE;
  io.offset = offset;
  return io;
}

// An HDF5 call on dataset `object` (none: ""), chunked in `chunk` bytes (0: not).
Io h5(const char* name, OTF2_IoOperationMode mode, uint64_t bytes, const char* object = "",
      uint64_t chunk = 0) {
  Io io;
  io.name = name;
  io.mode = mode;
  io.bytes = bytes;
  io.object = object;
  io.chunk_bytes = chunk;
  return io;
}

// Two ranks (processes 100 and 200), thread 101 and 201, on one shared file.
std::pair<otf2::Ref, otf2::Ref> two_ranks(TraceBuilder& b, const char* path) {
  b.process(200, 1, "app", {201});
  return {b.file(path, 3), b.file(path, 4)};
}

}  // namespace

// Each rank writes its 100-byte pieces with MPI_File_write_at, or with MPI_File_write_at_all.
void mpiio_small_independent(TraceBuilder& b, bool fire) {
  auto [f1, f2] = two_ranks(b, "/data/shared.dat");
  for (uint64_t i = 0; i < 3; ++i) {
    uint64_t t = 1000 + 1000 * i;
    Io io = mpi(fire ? "MPI_File_write_at" : "MPI_File_write_at_all", 100, !fire,
                static_cast<int64_t>(200 * i));
    b.user_io(101, t, t + 100, f1, io);
    io.offset += 100;
    b.user_io(201, t, t + 100, f2, io);
  }
}

// One collective write of 1 MiB whose aggregator wrote four 100-byte pieces at odd offsets, or
// four aligned 256 KiB pieces; the device received the first piece's request.
void collective_small_requests(TraceBuilder& b, bool fire) {
  otf2::Ref f = b.file("/data/field.dat", 3);
  b.user_io(101, 1000, 2000, f, mpi("MPI_File_write_at_all", 1 << 20, true, 0));
  uint64_t piece = fire ? 100 : 256 << 10;
  for (uint64_t i = 0; i < 4; ++i) {
    uint64_t id = b.rw(101, 1100 + 200 * i, 1200 + 200 * i, f, true, piece,
                       static_cast<int64_t>(i * (fire ? 300 : piece)));
    if (i == 0) b.block(1150, 1190, true, fire ? 512 : piece, 2048, id);
  }
}

// Both ranks append with MPI_File_write_shared: most of the MPI-IO time, or a sliver of it beside
// a long collective write.
void shared_file_pointer(TraceBuilder& b, bool fire) {
  auto [f1, f2] = two_ranks(b, "/data/log.dat");
  for (uint64_t i = 0; i < 2; ++i) {
    uint64_t t = 1000 + 2000 * i, d = fire ? 1000 : 10;
    Io io = mpi("MPI_File_write_shared", 4096);
    b.user_io(101, t, t + d, f1, io);
    b.user_io(201, t + d, t + 2 * d, f2, io);
  }
  b.user_io(101, 10000, fire ? 10100 : 100000, f1, mpi("MPI_File_write_at_all", 1 << 20, true, 0));
}

// Five H5Dwrite of one dataset: 100 bytes each, or 1 MiB.
void hdf5_small_writes(TraceBuilder& b, bool fire) {
  otf2::Ref f = b.file("/data/out.h5", 3);
  for (uint64_t i = 0; i < 5; ++i) {
    uint64_t t = 1000 + 1000 * i;
    b.user_io(
        101, t, t + 500, f,
        h5("H5Dwrite", OTF2_IO_OPERATION_MODE_WRITE, fire ? 100 : 1 << 20, "/grid/temperature"));
  }
}

// A chunked dataset: 1 KiB chunks, or 64 KiB.
void hdf5_small_chunks(TraceBuilder& b, bool fire) {
  otf2::Ref f = b.file("/data/out.h5", 3);
  b.user_io(
      101, 1000, 2000, f,
      h5("H5Dwrite", OTF2_IO_OPERATION_MODE_WRITE, 1 << 20, "/grid/pressure", fire ? 1024 : 65536));
}

// Three H5Fflush and small writes near the start inside an H5Dwrite: most of the HDF5 time, or a
// sliver of it beside a long H5Dwrite.
void hdf5_metadata(TraceBuilder& b, bool fire) {
  otf2::Ref f = b.file("/data/out.h5", 3);
  uint64_t flush = fire ? 5000 : 10;
  for (uint64_t i = 0; i < 3; ++i) {
    uint64_t t = 1000 + 10000 * i;
    b.user_io(101, t, t + flush, f, h5("H5Fflush", OTF2_IO_OPERATION_MODE_FLUSH, 0));
  }
  uint64_t t = 40000, d = fire ? 2000 : 200000;
  b.user_io(101, t, t + d, f, h5("H5Dwrite", OTF2_IO_OPERATION_MODE_WRITE, 1 << 20, "/grid/u"));
  b.rw(101, t + 10, t + (fire ? 1500 : 20), f, true, 512, 96);  // a metadata block
  b.rw(101, t + 1600, t + 1700, f, true, 1 << 20, 8192);        // the data
}

}  // namespace ezio::test
