// SPDX-License-Identifier: GPL-2.0-only
// The mpiio EZTrace module (docs/mpiio.md) end to end, under MPICH and Open MPI (OMPIO, and ROMIO
// with --mca io romio321):
// tests/programs/mpiio/mpiio_calls.c built for each MPI, under `eziotrace -t <mpi>,mpiio,posixio
// -- <its launcher> -np 2`, writing on a private loop device, read back from the merged archive.
// Per rank: how often each MPI_File_* region was entered, each call's MPI-IO operation (mode,
// bytes asked and done, offset through the file view, collective and non-blocking flags), the
// POSIX call and system call each independent write made inside its MPI-IO call (for the
// non-blocking write: a system call of some thread before MPI_Wait returns), the aggregators'
// system calls inside the collective writes; and the device's requests against its counters.
#include <gtest/gtest.h>

#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "loop_fs.h"
#include "mpiio_archive.h"
#include "mpiio_mpis.h"
#include "run.h"

namespace fs = std::filesystem;
using ezio::test::Mpi;
using ezio::test::MpiioArchive;
using ezio::test::MpiioCall;

namespace {

// mpiio_calls.c's sizes.
constexpr uint64_t kBlock = 4096, kAtInts = 1000, kSharedBytes = 300, kViewDisp = 16384,
                   kViewInts = 256, kIwriteOffset = 512, kIwriteInts = 100, kSplitInts = 64,
                   kOrderedInts = 16, kCOffset = 1024, kCInts = 8;

struct Expected {
  uint32_t mode, flags;
  uint64_t bytes;
  int64_t offset;  // -1: none (shared file pointer, sync)
};

std::map<std::string, Expected> expected_ops(uint64_t rank, bool large_count) {
  const uint64_t view = kViewDisp + rank * kViewInts * 4;
  const uint32_t coll = OTF2_IO_OPERATION_FLAG_COLLECTIVE, nb = OTF2_IO_OPERATION_FLAG_NON_BLOCKING;
  const uint32_t w = OTF2_IO_OPERATION_MODE_WRITE, r = OTF2_IO_OPERATION_MODE_READ;
  auto off = [](uint64_t v) { return static_cast<int64_t>(v); };
  std::map<std::string, Expected> ops = {
      {"MPI_File_write_at_all", {w, coll, kBlock, off(rank * kBlock)}},
      {"MPI_File_write_at", {w, 0, kAtInts * 4, off((2 + rank) * kBlock)}},
      {"MPI_File_write_shared", {w, 0, kSharedBytes, -1}},
      {"MPI_File_write_all", {w, coll, kViewInts * 4, off(view)}},
      {"MPI_File_read_at_all", {r, coll, kViewInts * 4, off(view)}},
      {"MPI_File_iwrite_at", {w, nb, kIwriteInts * 4, off(view + kIwriteOffset * 4)}},
      // write_all moved the individual pointer past its kViewInts ints.
      {"MPI_File_write_all_begin", {w, coll | nb, kSplitInts * 4, off(view + kViewInts * 4)}},
      {"MPI_File_sync", {OTF2_IO_OPERATION_MODE_FLUSH, coll, 0, -1}},
      // After MPI_File_seek(fh, 0, MPI_SEEK_SET): the view's start.
      {"MPI_File_read", {r, 0, kViewInts * 4, off(view)}},
      {"MPI_File_write_ordered", {w, coll, kOrderedInts * 4, -1}},
  };
  if (large_count) ops["MPI_File_write_at_c"] = {w, 0, kCInts * 4, off(view + kCOffset * 4)};
  return ops;
}

class MpiioModule : public testing::TestWithParam<Mpi> {};

std::map<std::string, int> expected_counts(uint64_t rank, bool large_count) {
  std::map<std::string, int> want = {
      {"MPI_File_open", 1},          {"MPI_File_write_at_all", 1}, {"MPI_File_write_at", 1},
      {"MPI_File_write_shared", 1},  {"MPI_File_set_view", 1},     {"MPI_File_write_all", 1},
      {"MPI_File_read_at_all", 1},   {"MPI_File_iwrite_at", 1},    {"MPI_File_write_all_begin", 1},
      {"MPI_File_write_all_end", 1}, {"MPI_File_sync", 1},         {"MPI_File_set_size", 1},
      {"MPI_File_preallocate", 1},   {"MPI_File_seek", 1},         {"MPI_File_read", 1},
      {"MPI_File_write_ordered", 1}, {"MPI_File_close", 1}};
  if (large_count) want["MPI_File_write_at_c"] = 1;
  if (rank == 0) want["MPI_File_delete"] = 1;
  return want;
}

void expect_call(const Mpi& mpi, uint64_t rank, const MpiioCall& c, const MpiioArchive& archive) {
  SCOPED_TRACE(c.name);
  auto ops = expected_ops(rank, mpi.large_count);
  if (auto x = ops.find(c.name); x != ops.end()) {
    ASSERT_TRUE(c.has_op);
    EXPECT_EQ(c.mode, x->second.mode);
    EXPECT_EQ(c.flags, x->second.flags);
    EXPECT_EQ(c.bytes_request, x->second.bytes);
    EXPECT_EQ(c.offset, x->second.offset);
    // A split collective completes in its `_end`.
    if (c.name != "MPI_File_write_all_begin") {
      EXPECT_EQ(c.bytes_result, x->second.bytes);
    }
  }
  // Opened on MPI_COMM_WORLD: its size and this rank.
  if (c.name == "MPI_File_open") {
    EXPECT_EQ(c.create_attributes,
              (std::map<std::string, uint64_t>{{"mpiio.comm_size", 2}, {"mpiio.comm_rank", rank}}));
  }
  if (c.name == "MPI_File_write_all_end") {
    EXPECT_TRUE(c.complete_outside);
    EXPECT_EQ(c.bytes_result, kSplitInts * 4);
  }
  // Independent writes: the MPI-IO layer's POSIX write, and its system call, lie inside the
  // MPI-IO call.
  if (c.name == "MPI_File_write_at" || c.name == "MPI_File_write_shared" ||
      c.name == "MPI_File_write_at_c") {
    EXPECT_TRUE(c.nested.count(mpi.posix_write));
    EXPECT_TRUE(c.nested.count(mpi.syscall_write));
  }
  // The non-blocking one: completed in MPI_Wait, with a system call writing its bytes at its
  // offset made by some thread between the call and the end of the wait (ROMIO hands it to
  // glibc's POSIX AIO: its thread writes, not a call EZTrace's posixio sees).
  if (c.name == "MPI_File_iwrite_at") {
    EXPECT_TRUE(c.completed_after);
    ASSERT_GT(c.wait_end, c.enter);
    EXPECT_TRUE(
        archive.pwrite_between(c.enter, c.wait_end, ops.at(c.name).offset, kIwriteInts * 4));
  }
}

TEST_P(MpiioModule, EveryCallOfEachRankIsRecordedWithItsBytesOffsetsAndPosixWork) {
  const Mpi& mpi = GetParam();
  ASSERT_TRUE(fs::exists(ezio::test::program("mpiio_calls_" + mpi.name)))
      << "mpiio_calls_" << mpi.name << " was not built: the MPI is missing (scripts/setup.sh)";
  ASSERT_TRUE(fs::exists(fs::path(EZIO_BINARY).parent_path() / "eztrace" / mpi.name /
                         "libeztrace-mpiio.so"))
      << "the mpiio module was not built for " << mpi.name;
  fs::path dir = ezio::test::scratch_dir("mpiio-e2e-" + mpi.label);
  fs::path out = dir / "out";
  // Without a journal: ext4's journal thread commits on its own timer, at times after the
  // recording ended but before the device's counters are read.
  ezio::test::LoopFs loop("ext4-nojournal");
  std::vector<std::string> args = {"-t", mpi.name + ",mpiio,posixio", "-o", out.string(), "--"};
  for (auto& w : mpi.command("mpiio_calls", {loop.mount_point().string()})) args.push_back(w);
  // What the file system's creation left dirty is written now, not by the flusher during the run.
  ezio::test::must_run({"sync", "-f", loop.mount_point().string()});
  auto before = ezio::test::device_bytes_served(loop.device());
  auto r = ezio::test::eziotrace(args);
  auto after = ezio::test::device_bytes_served(loop.device());
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const auto pids = ezio::test::pid_of_rank(r.out);
  ASSERT_EQ(pids.size(), 2u) << r.out;

  // otf2-print reads the merged archive (every rank's MPI-IO definitions) without a warning.
  auto p = ezio::test::run({"otf2-print", "-A", (out / "eziotrace.otf2").string()});
  EXPECT_EQ(p.status, 0);
  EXPECT_EQ(p.err, "") << "otf2-print";

  MpiioArchive archive(out / "eziotrace.otf2");
  // The ranks' EZTrace traces merged (the launcher has none: it is not an MPI process).
  EXPECT_EQ(archive.node_uint("EZIOTRACE::EZTRACE_PROCESSES"), 2u);
  // The device's requests during the run against the recording's: the application's (attributed)
  // and the others' on that device (counted as unattributed, without direction: the flusher's
  // superblock writes). Equal: the loop device is private, has no journal, and ext4 is mounted
  // without its block-bitmap prefetch (tests/support/loop_fs.cpp), the only reads that came from
  // no process, before the recording started (docs/kernel-layers.md, "The device's own counters").
  auto device = archive.device_bytes(loop.device());
  int64_t read = after.read - before.read, written = after.written - before.written;
  int64_t recorded = static_cast<int64_t>(device.read + device.written + device.unattributed);
  std::cerr << mpi.label << ": device " << loop.device() << " read " << read << " written "
            << written << " B; recorded read " << device.read << " written " << device.written
            << " unattributed " << device.unattributed << " B\n";
  EXPECT_GT(device.written, 0u);
  EXPECT_EQ(recorded, read + written);
  EXPECT_LE(written, static_cast<int64_t>(device.written + device.unattributed));
  // Collective writes: the aggregators' system calls lie inside their collective call.
  std::map<std::string, std::set<std::string>> collective_nested;
  for (auto [rank, pid] : pids) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    std::vector<MpiioCall> calls = archive.calls(pid);
    std::map<std::string, int> count;
    for (const auto& c : calls) ++count[c.name];
    EXPECT_EQ(count, expected_counts(rank, mpi.large_count));
    for (const auto& c : calls) {
      expect_call(mpi, rank, c, archive);
      if (c.name == "MPI_File_write_at_all" || c.name == "MPI_File_write_all") {
        collective_nested[c.name].insert(c.nested.begin(), c.nested.end());
      }
    }
  }
  for (const auto& name : {"MPI_File_write_at_all", "MPI_File_write_all"}) {
    EXPECT_TRUE(collective_nested[name].count(mpi.syscall_write)) << name;
  }
}

INSTANTIATE_TEST_SUITE_P(Mpis, MpiioModule, testing::ValuesIn(ezio::test::mpiio_implementations()),
                         ezio::test::mpi_name);

size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// MPI and HDF5 modules asked for a program that uses neither library (dd): one sentence each on
// stderr, and the rest recorded (EZTrace's mpich module would make it exit 1 and write no trace).
TEST(MpiioRefused, ModulesOfLibrariesTheProgramDoesNotUseAreSaidAndTheRestRecorded) {
  fs::path dir = ezio::test::scratch_dir("mpiio-e2e-unused");
  fs::path out = dir / "out";
  auto r =
      ezio::test::eziotrace({"-t", "mpich,mpiio,hdf5,posixio", "-o", out.string(), "--", "dd",
                             "if=/dev/zero", "of=" + (dir / "x").string(), "bs=4096", "count=4"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(occurrences(r.err,
                        "-t mpich,mpiio was asked for, but dd uses no MPI library (none "
                        "among the libraries it needs): no MPI or MPI-IO call is "
                        "recorded; the other modules' calls (hdf5,posixio) are"),
            1u)
      << r.err;
  EXPECT_EQ(occurrences(r.err,
                        "the hdf5 module was asked for, but no process of the program "
                        "loaded libhdf5 (HDF5): nothing of it is recorded; the other "
                        "modules' calls are"),
            1u)
      << r.err;
  MpiioArchive archive(out / "eziotrace.otf2");
  EXPECT_EQ(archive.node_string("EZIOTRACE::USER_LEVEL"), "complete");
  EXPECT_EQ(archive.node_string("EZIOTRACE::STATUS"), "complete");
  auto files = ezio::test::eziotrace(
      {"files", "--json", "--file", (dir / "x").string(), (out / "eziotrace.otf2").string()});
  ASSERT_EQ(files.status, 0) << files.err;
  bool posix_writes = false;  // EZTrace's posixio recorded dd's writes
  nlohmann::json table = nlohmann::json::parse(files.out);
  for (auto& row : table["files"]) {
    posix_writes |= row["layer"] == "user" && row["write_bytes"] == 16384;
  }
  EXPECT_TRUE(posix_writes) << files.out;
}

// Only MPI modules asked for a program without MPI: nothing of EZTrace's would be left.
TEST(MpiioRefused, OnlyMpiModulesForAProgramWithoutMpiIsRefused) {
  fs::path dir = ezio::test::scratch_dir("mpiio-e2e-only-mpi");
  auto r = ezio::test::eziotrace({"-t", "mpiio", "-o", (dir / "out").string(), "--", "true"});
  EXPECT_GT(r.status, 0);
  EXPECT_LT(r.status, 128);
  EXPECT_NE(r.err.find("-t mpiio: true uses no MPI library"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "out" / "eziotrace.otf2"));
}

// A program started by a shell cannot be looked into: without EZTrace's MPI module an MPI program
// would abort in EZTrace's finalization, so it is refused before anything runs, saying what to add.
TEST(MpiioRefused, WithoutAnMpiModuleIsRefusedWithAClearMessage) {
  fs::path dir = ezio::test::scratch_dir("mpiio-e2e-refused");
  auto r = ezio::test::eziotrace(
      {"-t", "mpiio,posixio", "-o", (dir / "out").string(), "--", "sh", "-c", "true"});
  EXPECT_GT(r.status, 0);
  EXPECT_LT(r.status, 128);
  EXPECT_NE(r.err.find("trace with -t mpich,mpiio (MPICH) or -t openmpi,mpiio (Open MPI)"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir / "out" / "eziotrace.otf2"));
}

}  // namespace
