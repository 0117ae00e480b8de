// SPDX-License-Identifier: GPL-2.0-only
// A program nobody here wrote on Open MPI's parallel HDF5: h5py with mpi4py (Debian's
// python3-h5py-mpi, libhdf5_openmpi) under `eziotrace -t ... -- mpirun.openmpi -np 2 python3
// tests/programs/hdf5/h5py_mpi_collective.py`, writing its rows and reading them back
// collectively. Per rank: the H5Dwrite and H5Dread the script made, each with its bytes and the
// collective flag; each collective write holds MPI-IO calls which hold the POSIX and system calls
// that wrote both ranks' rows (on whichever rank made them); the archive is complete.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "hdf5_calls.h"
#include "run.h"

namespace fs = std::filesystem;
using ezio::test::Hdf5Call;
using ezio::test::program;

namespace {

constexpr int kRows = 8, kCols = 1024, kRanks = 2;
constexpr uint64_t kRowBytes = kCols * 8;

std::vector<Hdf5Call> named(const std::vector<Hdf5Call>& calls, const std::string& name) {
  std::vector<Hdf5Call> out;
  for (const auto& c : calls)
    if (c.name == name) out.push_back(c);
  return out;
}

// The -t given: HDF5 and POSIX only (the MPI module and mpiio chosen for the program), or with
// the MPI module named (mpiio still added: HDF5 on MPI does its I/O through MPI-IO); and the
// launcher started by `sh -c`, where eziotrace cannot rewrite its command: the preload helper
// re-executes it with EZTrace handed to the ranks only (EZTrace in orterun aborts or hangs it).
struct Way {
  std::string name, modules;
  bool via_shell;
};

void PrintTo(const Way& w, std::ostream* os) {
  *os << "-t " << w.modules << (w.via_shell ? ", launcher in sh -c" : "");
}

class H5pyMpi : public testing::TestWithParam<Way> {};

TEST_P(H5pyMpi, CollectiveWritesAndReadsAreCountedAndHoldTheirMpiIoAndPosixCalls) {
  auto probe = ezio::test::run({"/usr/bin/python3", "-c", "import mpi4py, h5py"});
  ASSERT_EQ(probe.status, 0) << "python3-h5py-mpi or python3-mpi4py is missing (scripts/setup.sh): "
                             << probe.err;
  ASSERT_TRUE(
      fs::exists(fs::path(EZIO_BINARY).parent_path() / "eztrace/openmpi/libeztrace-mpiio.so"));
  const Way& way = GetParam();
  fs::path dir = ezio::test::scratch_dir("hdf5-e2e-h5py-mpi");
  fs::path out = dir / "out";
  std::vector<std::string> command = {
      "mpirun.openmpi",        "--allow-run-as-root", "-np",
      std::to_string(kRanks),  "/usr/bin/python3",    program("h5py_mpi_collective.py"),
      (dir / "c.h5").string(), std::to_string(kRows), std::to_string(kCols)};
  if (way.via_shell) {
    std::string line;
    for (const auto& w : command) line += (line.empty() ? "" : " ") + w;
    command = {"sh", "-c", line};
  }
  std::vector<std::string> args = {"-t", way.modules, "-o", out.string(), "--"};
  args.insert(args.end(), command.begin(), command.end());
  auto r = ezio::test::eziotrace(args);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  if (!way.via_shell) {
    EXPECT_NE(r.err.find("mpiio"), std::string::npos) << "mpiio added, and said: " << r.err;
  }
  const auto pids = ezio::test::pid_of_rank(r.out);
  ASSERT_EQ(pids.size(), static_cast<size_t>(kRanks)) << r.out;
  auto p = ezio::test::run({"otf2-print", "-A", (out / "eziotrace.otf2").string()});
  EXPECT_EQ(p.status, 0);

  ezio::test::Hdf5Archive archive(out / "eziotrace.otf2");
  EXPECT_EQ(archive.node_string("EZIOTRACE::STATUS"), "complete");
  constexpr int kMine = kRows / kRanks;
  std::vector<uint64_t> posix_bytes(kMine), syscall_bytes(kMine);
  for (auto [rank, pid] : pids) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    auto calls = archive.calls(pid);
    auto writes = named(calls, "H5Dwrite");
    ASSERT_EQ(writes.size(), static_cast<size_t>(kMine));  // one per row assignment
    for (int i = 0; i < kMine; ++i) {
      SCOPED_TRACE("write " + std::to_string(i));
      const auto& w = writes[i];
      EXPECT_EQ(w.op.at("hdf5.object"), "/d");
      EXPECT_TRUE(w.handle_path.ends_with("c.h5")) << w.handle_path;
      EXPECT_EQ(w.bytes_request, kRowBytes);
      EXPECT_EQ(w.bytes_result, kRowBytes);
      EXPECT_EQ(w.flags, uint32_t{OTF2_IO_OPERATION_FLAG_COLLECTIVE});
      EXPECT_EQ(w.op.at("hdf5.xfer"), "collective");
      EXPECT_EQ(w.op.at("hdf5.layout"), "contiguous");
      EXPECT_GE(w.inside("MPI_File_write_at_all"), 1);
      EXPECT_EQ(w.inside("MPI_File_write_at"), 0);
      posix_bytes[i] += w.posix_write_bytes_in_mpiio;
      syscall_bytes[i] += w.syscall_write_bytes_in_mpiio;
    }
    auto reads = named(calls, "H5Dread");
    ASSERT_EQ(reads.size(), 1u);  // the rank's block read back at once
    EXPECT_EQ(reads[0].op.at("hdf5.object"), "/d");
    EXPECT_EQ(reads[0].mode, OTF2_IO_OPERATION_MODE_READ);
    EXPECT_EQ(reads[0].bytes_request, kMine * kRowBytes);
    EXPECT_EQ(reads[0].bytes_result, kMine * kRowBytes);
    EXPECT_EQ(reads[0].flags, uint32_t{OTF2_IO_OPERATION_FLAG_COLLECTIVE});
    EXPECT_GE(reads[0].inside("MPI_File_read_at_all"), 1);
    EXPECT_EQ(named(calls, "H5Fcreate").size(), 1u);
  }
  // Each collective write: both ranks' rows reached the file through POSIX and system calls
  // made inside an MPI-IO call of that write, on whichever rank made them.
  for (int i = 0; i < kMine; ++i) {
    SCOPED_TRACE("write " + std::to_string(i));
    EXPECT_EQ(posix_bytes[i], kRanks * kRowBytes);
    EXPECT_EQ(syscall_bytes[i], kRanks * kRowBytes);
  }
  // `eziotrace datasets`: the one dataset, every row written and read back once, and exactly
  // those bytes at MPI-IO, POSIX and the system calls below the H5Dwrite/H5Dread calls.
  auto ds = ezio::test::eziotrace({"datasets", "--json", out.string()});
  ASSERT_EQ(ds.status, 0) << ds.err;
  auto rows = nlohmann::json::parse(ds.out)["datasets"];
  ASSERT_EQ(rows.size(), 1u) << rows.dump(1);
  const auto& d = rows[0];
  EXPECT_EQ(d["object"], "/d");
  EXPECT_EQ(d["layout"], "contiguous");
  EXPECT_EQ(d["xfer"], "collective");
  EXPECT_EQ(d["processes"], kRanks);
  EXPECT_EQ(d["writes"], kRows);
  EXPECT_EQ(d["reads"], kRanks);
  EXPECT_EQ(d["asked_write_bytes"], kRows * kRowBytes);
  EXPECT_EQ(d["asked_read_bytes"], kRows * kRowBytes);
  for (const char* below : {"mpiio_bytes", "posix_bytes", "syscall_bytes"})
    EXPECT_EQ(d[below], 2 * kRows * kRowBytes) << below;
}

INSTANTIATE_TEST_SUITE_P(Ways, H5pyMpi,
                         testing::Values(Way{"ChosenMpi", "hdf5,posixio", false},
                                         Way{"NamedMpi", "openmpi,hdf5,posixio", false},
                                         Way{"LauncherInAShell", "openmpi,mpiio,hdf5,posixio",
                                             true}),
                         [](const auto& info) { return info.param.name; });

}  // namespace
