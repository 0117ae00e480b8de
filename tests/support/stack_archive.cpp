// SPDX-License-Identifier: GPL-2.0-only
#include "tests/support/stack_archive.h"

#include <fmt/format.h>

#include "common/otf2/writer.h"
#include "common/schema/attributes.h"

namespace ezio::test {

using otf2::EventWriter;
using otf2::Ref;

namespace {

constexpr auto kWrite = OTF2_IO_OPERATION_MODE_WRITE;
constexpr auto kCollective = OTF2_IO_OPERATION_FLAG_COLLECTIVE;
constexpr auto kNone = OTF2_IO_OPERATION_FLAG_NONE;

struct Stack {
  explicit Stack(const std::filesystem::path& dir)
      : w(dir),
        node(w.system_tree_node("testhost", "machine")),
        hdf5(w.io_paradigm("HDF5", "HDF5", OTF2_IO_PARADIGM_CLASS_PARALLEL,
                           OTF2_IO_PARADIGM_FLAG_NONE)),
        mpiio(w.io_paradigm("MPI-IO", "MPI I/O", OTF2_IO_PARADIGM_CLASS_PARALLEL,
                            OTF2_IO_PARADIGM_FLAG_NONE)),
        posix(w.io_paradigm("POSIX I/O", "POSIX I/O", OTF2_IO_PARADIGM_CLASS_SERIAL,
                            OTF2_IO_PARADIGM_FLAG_NONE)),
        kernel(w.io_paradigm("linux", "Linux kernel I/O", OTF2_IO_PARADIGM_CLASS_SERIAL,
                             OTF2_IO_PARADIGM_FLAG_OS)),
        file(w.io_file("/scratch/out.h5", node)),
        layout(w.attribute({"hdf5.layout", "dataset layout", OTF2_TYPE_STRING})),
        chunk(w.attribute({"hdf5.chunk_bytes", "chunk size", OTF2_TYPE_UINT64})),
        call_id(w.attribute(schema::kCallId)),
        mpi_offset(w.attribute({"mpiio.offset", "byte offset through the view", OTF2_TYPE_INT64})),
        sc_bytes(w.attribute(schema::syscall::kBytes)),
        sc_result(w.attribute(schema::syscall::kResult)),
        sc_offset(w.attribute(schema::syscall::kOffset)) {}

  Ref region(const std::string& name, const std::string& canonical, OTF2_RegionRole role) {
    return w.region(name, canonical,
                    canonical.find(':') == std::string::npos ? "EZTrace" : "eziotrace", role);
  }

  otf2::ArchiveWriter w;
  Ref node, hdf5, mpiio, posix, kernel, file;
  otf2::TypedAttribute layout, chunk, call_id, mpi_offset, sc_bytes, sc_result, sc_offset;
  uint64_t next_id = 1;
};

// One call with one I/O operation of `bytes` on `handle`, around `inside`.
template <class Inside>
void io_call(Stack& s, const EventWriter& e, Ref region, Ref handle, uint64_t t0, uint64_t t1,
             uint64_t bytes, OTF2_IoOperationFlag flags, const otf2::EventAttributes* attrs,
             Inside inside) {
  uint64_t id = s.next_id++;
  e.enter(t0, region);
  if (attrs) {
    e.io_operation_begin(t0, handle, kWrite, flags, bytes, id, *attrs);
  } else {
    e.io_operation_begin(t0, handle, kWrite, flags, bytes, id);
  }
  inside();
  e.io_operation_complete(t1, handle, bytes, id);
  e.leave(t1, region);
}

void rank(Stack& s, int r, bool inverted) {
  OTF2_LocationRef loc = 1000 + r;
  Ref group = s.w.location_group(fmt::format("rank{} [{}]", r, 200 + r),
                                 OTF2_LOCATION_GROUP_TYPE_PROCESS, s.node);
  s.w.location(loc, fmt::format("rank{} [{}]", r, 1000 + r), OTF2_LOCATION_TYPE_CPU_THREAD, group);
  s.w.location_property(loc, "EZIOTRACE::TID", static_cast<uint64_t>(loc));
  Ref h5 = s.w.io_handle(fmt::format("/scratch/out.h5 (hdf5 rank {})", r), s.file, s.hdf5);
  Ref mpi = s.w.io_handle(fmt::format("/scratch/out.h5 (mpiio rank {})", r), s.file, s.mpiio);
  Ref px = s.w.io_handle("/scratch/out.h5", s.file, s.posix);
  Ref sys = s.w.io_handle(fmt::format("/scratch/out.h5 [pid {} fd 3]", 200 + r), s.file, s.kernel);
  auto fn = OTF2_REGION_ROLE_FUNCTION, io = OTF2_REGION_ROLE_FILE_IO;
  Ref fcreate = s.region("H5Fcreate", "H5Fcreate", fn),
      fopen = s.region("MPI_File_open", "MPI_File_open", fn);
  Ref dwrite = s.region("H5Dwrite", "H5Dwrite", fn);
  Ref wall = s.region("MPI_File_write_at_all", "MPI_File_write_at_all", fn);
  Ref mwrite = s.region("MPI_File_write", "MPI_File_write", fn);
  Ref pwrite = s.region("pwrite", "pwrite", io), write = s.region("write", "write", io);
  Ref pwrite64 = s.region("pwrite64", "syscall:pwrite64", io);

  EventWriter e = s.w.event_writer(loc);
  e.enter(100, fcreate);
  e.io_create_handle(100, h5, OTF2_IO_ACCESS_MODE_READ_WRITE, OTF2_IO_CREATION_FLAG_CREATE,
                     OTF2_IO_STATUS_FLAG_NONE);
  e.enter(200, fopen);
  e.io_create_handle(500, mpi, OTF2_IO_ACCESS_MODE_READ_WRITE, OTF2_IO_CREATION_FLAG_CREATE,
                     OTF2_IO_STATUS_FLAG_NONE);
  e.leave(500, fopen);
  e.leave(600, fcreate);

  // The dataset's own handle (the hdf5 module's object handle): its layout on its first transfer.
  Ref dataset = s.w.io_handle("/grid/temperature", s.file, s.hdf5, OTF2_IO_HANDLE_FLAG_NONE, h5);
  auto h5a = e.attributes();
  h5a.add_string(s.layout, "chunked").add(s.chunk, uint64_t{4096});
  io_call(s, e, dwrite, dataset, 1000, 9000, 4096, kCollective, &h5a, [&] {
    auto ma = e.attributes();
    ma.add(s.mpi_offset, static_cast<int64_t>(4096 * r));
    io_call(s, e, wall, mpi, 1100, 8900, 4096, kCollective, &ma, [&] {
      if (r != 0) return;
      io_call(s, e, pwrite, px, 2000, 3000, 8192, kNone, nullptr, [&] {
        auto sa = e.attributes();
        sa.add(s.sc_bytes, uint64_t{8192}).add(s.sc_result, int64_t{8192});
        sa.add(s.sc_offset, int64_t{0}).add(s.call_id, uint64_t{77});
        uint64_t id = s.next_id++;
        e.enter(2100, pwrite64, sa);
        e.io_operation_begin(2100, sys, kWrite, kNone, 8192, id);
        e.io_operation_complete(2900, sys, 8192, id);
        e.leave(2900, pwrite64);
      });
    });
  });
  if (inverted && r == 1) {
    io_call(s, e, write, px, 9400, 9950, 100, kNone, nullptr,
            [&] { io_call(s, e, mwrite, mpi, 9500, 9900, 100, kNone, nullptr, [] {}); });
  }
}

}  // namespace

std::filesystem::path write_stack_archive(const std::filesystem::path& dir, bool inverted) {
  Stack s(dir);
  for (int r = 0; r < 2; ++r) rank(s, r, inverted);
  Ref group = s.w.location_group("block sda", OTF2_LOCATION_GROUP_TYPE_PROCESS, s.node);
  constexpr OTF2_LocationRef kDevice = (uint64_t{1} << 32) | 1;
  s.w.location(kDevice, "block sda", OTF2_LOCATION_TYPE_CPU_THREAD, group);
  Ref dev = s.w.io_handle("/dev/sda", s.w.io_file("/dev/sda", s.node), s.kernel,
                          OTF2_IO_HANDLE_FLAG_PRE_CREATED);
  EventWriter e = s.w.event_writer(kDevice);
  auto ba = e.attributes();
  ba.add(s.call_id, uint64_t{77});  // rank 0's pwrite64
  e.io_operation_begin(4000, dev, kWrite, OTF2_IO_OPERATION_FLAG_NON_BLOCKING, 8192, 1, ba);
  e.io_operation_complete(5000, dev, 8192, 1);
  s.w.system_tree_node_property(s.node, "EZIOTRACE::STATUS", std::string_view("complete"));
  otf2::Clock clock;
  clock.global_offset = 0;
  clock.trace_length = 10000;
  s.w.clock(clock);
  s.w.close();
  return s.w.anchor();
}

}  // namespace ezio::test
