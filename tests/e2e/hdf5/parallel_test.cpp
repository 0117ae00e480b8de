// SPDX-License-Identifier: GPL-2.0-only
// The hdf5 EZTrace module (docs/hdf5.md) on MPICH's parallel HDF5: tests/programs/hdf5/
// hdf5_parallel.c under `eziotrace -t mpich,mpiio,hdf5,posixio -- mpiexec.mpich -np 2`. Per rank:
// every HDF5 call counted, collective and independent writes told apart (flag and hdf5.xfer), and
// the MPI-IO calls they made inside them, down to ROMIO's pwrites.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "hdf5_calls.h"
#include "run.h"

namespace fs = std::filesystem;
using ezio::test::Hdf5Call;
using ezio::test::program;

namespace {

constexpr uint64_t kPart = 65536 * 4, kChunkBytes = 16384 * 4;

std::vector<Hdf5Call> named(const std::vector<Hdf5Call>& calls, const std::string& name) {
  std::vector<Hdf5Call> out;
  for (const auto& c : calls)
    if (c.name == name) out.push_back(c);
  return out;
}

TEST(Hdf5Parallel, CollectiveAndIndependentWritesHoldTheirMpiIoAndPosixCalls) {
  ASSERT_TRUE(fs::exists(program("hdf5_parallel")))
      << "hdf5_parallel was not built: libhdf5-mpich-dev or MPICH is missing (scripts/setup.sh)";
  ASSERT_TRUE(fs::exists(fs::path(EZIO_BINARY).parent_path() / "eztrace/libeztrace-hdf5.so"));
  ASSERT_TRUE(
      fs::exists(fs::path(EZIO_BINARY).parent_path() / "eztrace/mpich/libeztrace-mpiio.so"));
  fs::path dir = ezio::test::scratch_dir("hdf5-e2e-parallel");
  fs::path out = dir / "out";
  auto r =
      ezio::test::eziotrace({"-t", "mpich,mpiio,hdf5,posixio", "-o", out.string(), "--",
                             "mpiexec.mpich", "-np", "2", program("hdf5_parallel"), dir.string()});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const auto pids = ezio::test::pid_of_rank(r.out);
  ASSERT_EQ(pids.size(), 2u) << r.out;
  auto p = ezio::test::run({"otf2-print", "-A", (out / "eziotrace.otf2").string()});
  EXPECT_EQ(p.status, 0);
  EXPECT_EQ(p.err, "") << "otf2-print";

  ezio::test::Hdf5Archive archive(out / "eziotrace.otf2");
  uint64_t collective_posix_bytes = 0;
  for (auto [rank, pid] : pids) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    auto calls = archive.calls(pid);
    std::map<std::string, int> want = {{"H5Fcreate", 1},  {"H5Dcreate2", 3}, {"H5Dwrite", 3},
                                       {"H5Acreate2", 1}, {"H5Awrite", 1},   {"H5Aclose", 1},
                                       {"H5Dread", 1},    {"H5Dclose", 3},   {"H5Fclose", 1}};
    EXPECT_EQ(ezio::test::count_names(calls), want);
    auto create = named(calls, "H5Fcreate");
    ASSERT_EQ(create.size(), 1u);
    EXPECT_TRUE(create[0].created_handle);
    EXPECT_TRUE(create[0].handle_path.ends_with("parallel.h5")) << create[0].handle_path;
    EXPECT_GE(create[0].inside("MPI_File_open"), 1);

    auto writes = named(calls, "H5Dwrite");
    ASSERT_EQ(writes.size(), 3u);
    const char* objects[] = {"/coll", "/indep", "/chunked"};
    for (int i = 0; i < 3; ++i) {
      SCOPED_TRACE(objects[i]);
      const auto& w = writes[i];
      bool collective = i != 1;
      EXPECT_EQ(w.op.at("hdf5.object"), objects[i]);
      EXPECT_EQ(w.bytes_request, kPart);
      EXPECT_EQ(w.bytes_result, kPart);
      EXPECT_EQ(w.flags, collective ? uint32_t{OTF2_IO_OPERATION_FLAG_COLLECTIVE} : 0u);
      EXPECT_EQ(w.op.at("hdf5.xfer"), collective ? "collective" : "independent");
      EXPECT_EQ(w.op.at("hdf5.layout"), i == 2 ? "chunked" : "contiguous");
      if (collective) {
        EXPECT_GE(w.inside("MPI_File_write_at_all"), 1);
        EXPECT_EQ(w.inside("MPI_File_write_at"), 0);
      } else {
        EXPECT_EQ(w.inside("MPI_File_write_at"), 1);
        EXPECT_EQ(w.inside("MPI_File_write_at_all"), 0);
        // ROMIO's pwrite of this rank's part, and its system call, inside the H5Dwrite.
        EXPECT_EQ(w.posix_write_bytes, kPart);
        EXPECT_EQ(w.syscall_write_bytes, kPart);
      }
    }
    EXPECT_EQ(writes[2].op_number.at("hdf5.chunk_bytes"), kChunkBytes);
    // Two-phase I/O: the aggregator writes both ranks' parts inside its collective call.
    collective_posix_bytes += writes[0].posix_write_bytes;

    auto reads = named(calls, "H5Dread");
    ASSERT_EQ(reads.size(), 1u);
    EXPECT_EQ(reads[0].mode, OTF2_IO_OPERATION_MODE_READ);
    EXPECT_EQ(reads[0].bytes_result, kPart);
    EXPECT_EQ(reads[0].flags, OTF2_IO_OPERATION_FLAG_COLLECTIVE);
    EXPECT_GE(reads[0].inside("MPI_File_read_at_all"), 1);

    auto attr = named(calls, "H5Awrite");
    ASSERT_EQ(attr.size(), 1u);
    EXPECT_EQ(attr[0].op.at("hdf5.object"), "/coll@ranks");
    EXPECT_EQ(attr[0].bytes_request, 4u);
    for (const auto& c : named(calls, "H5Fclose")) EXPECT_TRUE(c.destroyed_handle);
  }
  EXPECT_EQ(collective_posix_bytes, 2 * kPart);

  // `eziotrace datasets`: both ranks' transfers of each dataset, and below them exactly the bytes
  // asked, at MPI-IO, POSIX and the system calls (one node: each rank moves its own part).
  auto ds = ezio::test::eziotrace({"datasets", "--json", out.string()});
  ASSERT_EQ(ds.status, 0) << ds.err;
  auto rows = nlohmann::json::parse(ds.out)["datasets"];
  ASSERT_EQ(rows.size(), 3u) << rows.dump(1);
  struct Want {
    const char* object;
    const char* xfer;
    uint64_t reads;
  };
  const Want want[] = {
      {"/chunked", "collective", 0}, {"/coll", "collective", 2}, {"/indep", "independent", 0}};
  for (size_t i = 0; i < 3; ++i) {
    SCOPED_TRACE(want[i].object);
    const auto& row = rows[i];
    EXPECT_EQ(row["object"], want[i].object);
    EXPECT_EQ(row["xfer"], want[i].xfer);
    EXPECT_EQ(row["processes"], 2);
    EXPECT_EQ(row["writes"], 2);
    EXPECT_EQ(row["reads"], want[i].reads);
    EXPECT_EQ(row["asked_write_bytes"], 2 * kPart);
    EXPECT_EQ(row["asked_read_bytes"], want[i].reads * kPart);
    uint64_t moved = (2 + want[i].reads) * kPart;
    for (const char* below : {"mpiio_bytes", "posix_bytes", "syscall_bytes"})
      EXPECT_EQ(row[below], moved) << below;
  }
  EXPECT_EQ(rows[0]["layout"], "chunked");
  EXPECT_EQ(rows[0]["chunk_bytes"], kChunkBytes);
}

}  // namespace
