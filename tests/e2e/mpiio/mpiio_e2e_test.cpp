// SPDX-License-Identifier: GPL-2.0-only
// The mpiio EZTrace module (docs/mpiio.md) end to end: tests/programs/mpiio/mpiio_calls.c under
// `eziotrace -t mpich,mpiio,posixio -- mpiexec.mpich -np 2`, read back from the merged archive.
// Per rank: how often each MPI_File_* region was entered, each call's MPI-IO operation (mode,
// bytes asked and done, offset through the file view, collective and non-blocking flags), and
// the POSIX call and system call each independent write made inside its MPI-IO call (for the
// non-blocking write: the AIO thread's system call before MPI_Wait returns).
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>

#include "common/otf2/reader.h"
#include "run.h"

namespace fs = std::filesystem;
using ezio::test::program;
using Kind = ezio::otf2::EventKind;

namespace {

// mpiio_calls.c's sizes.
constexpr uint64_t kBlock = 4096, kAtInts = 1000, kSharedBytes = 300, kViewDisp = 16384,
                   kViewInts = 256, kIwriteOffset = 512, kIwriteInts = 100, kSplitInts = 64,
                   kOrderedInts = 16, kCOffset = 1024, kCInts = 8;

// One outermost MPI_File_* call with what happened inside it.
struct MpiioCall {
  std::string name;
  bool has_op = false;
  uint32_t mode = 0, flags = 0;
  uint64_t bytes_request = 0, bytes_result = UINT64_MAX;
  int64_t offset = -1;            // the mpiio.offset attribute, -1 without
  std::set<std::string> nested;   // every region entered inside it (EZTrace's and the kernel's)
  uint64_t enter = 0;             // its ENTER's time
  uint64_t wait_end = 0;          // the end of the first MPI_Wait after it, 0 without
  bool complete_outside = false;  // for `_end`: a completion without a begin inside
  bool completed_after = false;   // its operation completed outside any MPI_File_* call
  std::map<std::string, uint64_t> create_attributes;  // of an IoCreateHandle inside it
};

class Archive {
 public:
  explicit Archive(const fs::path& anchor) : a_(ezio::otf2::read_archive(anchor)) {}

  // The outermost MPI_File_* calls of one location, in order.
  std::vector<MpiioCall> calls(uint64_t location) const {
    const auto& d = a_.defs;
    std::vector<MpiioCall> out;
    auto ev = a_.events.find(location);
    if (ev == a_.events.end()) return out;
    int depth = 0, call_depth = -1;
    for (const auto& e : ev->second) {
      if (e.kind == Kind::Enter) {
        std::string name = d.str(d.regions.at(e.ref).canonical);
        if (call_depth < 0 && name.starts_with("MPI_File_")) {
          call_depth = depth;
          out.emplace_back();
          out.back().name = name;
          out.back().enter = e.time;
        } else if (call_depth >= 0) {
          out.back().nested.insert(name);
        }
        ++depth;
      } else if (e.kind == Kind::Leave) {
        if (--depth == call_depth) call_depth = -1;
        if (call_depth < 0 && !out.empty() && out.back().wait_end == 0 &&
            d.str(d.regions.at(e.ref).canonical) == "MPI_Wait") {
          out.back().wait_end = e.time;
        }
      } else if (call_depth >= 0 && is_mpiio(e.ref) &&
                 (e.kind == Kind::IoOperationBegin || e.kind == Kind::IoOperationComplete)) {
        record(out.back(), e);
      } else if (call_depth >= 0 && is_mpiio(e.ref) && e.kind == Kind::IoCreateHandle) {
        for (const auto& attr : e.attributes) {
          out.back().create_attributes[d.str(d.attributes.at(attr.id).name)] = attr.value.uint32;
        }
      } else if (call_depth < 0 && is_mpiio(e.ref) && e.kind == Kind::IoOperationComplete) {
        // A non-blocking operation's end, in the MPI_Wait that completed its request.
        for (auto c = out.rbegin(); c != out.rend(); ++c) {
          if (c->has_op && c->bytes_result == UINT64_MAX) {
            c->bytes_result = e.a;
            c->completed_after = true;
            break;
          }
        }
      }
    }
    return out;
  }

  // Whether some thread made a pwrite64 system call of these bytes at this offset between t0 and
  // t1 (ROMIO's non-blocking writes go through glibc's POSIX AIO: its own thread writes).
  bool pwrite_between(uint64_t t0, uint64_t t1, int64_t offset, uint64_t bytes) const {
    const auto& d = a_.defs;
    for (const auto& [loc, events] : a_.events) {
      for (const auto& e : events) {
        if (e.kind != Kind::Enter || e.time < t0 || e.time > t1 ||
            d.str(d.regions.at(e.ref).canonical) != "syscall:pwrite64")
          continue;
        int64_t off = -1;
        uint64_t n = 0;
        for (const auto& attr : e.attributes) {
          std::string name = d.str(d.attributes.at(attr.id).name);
          if (name == "syscall.offset") off = attr.value.int64;
          if (name == "syscall.bytes") n = attr.value.uint64;
        }
        if (off == offset && n == bytes) return true;
      }
    }
    return false;
  }

 private:
  bool is_mpiio(uint64_t handle) const {
    const auto& d = a_.defs;
    auto h = d.io_handles.find(handle);
    if (h == d.io_handles.end()) return false;
    auto p = d.io_paradigms.find(h->second.paradigm);
    return p != d.io_paradigms.end() && d.str(p->second.identification) == "MPI-IO";
  }

  void record(MpiioCall& c, const ezio::otf2::Event& e) const {
    if (e.kind == Kind::IoOperationComplete) {
      c.bytes_result = e.a;
      c.complete_outside = !c.has_op;
      return;
    }
    c.has_op = true;
    c.mode = e.f1;
    c.flags = e.f2;
    c.bytes_request = e.a;
    for (const auto& attr : e.attributes) {
      if (a_.defs.str(a_.defs.attributes.at(attr.id).name) == "mpiio.offset") {
        c.offset = attr.value.int64;
      }
    }
  }

  ezio::otf2::Archive a_;
};

struct Expected {
  uint32_t mode, flags;
  uint64_t bytes;
  int64_t offset;  // -1: none (shared file pointer, sync)
};

std::map<std::string, Expected> expected_ops(uint64_t rank) {
  const uint64_t view = kViewDisp + rank * kViewInts * 4;
  const uint32_t coll = OTF2_IO_OPERATION_FLAG_COLLECTIVE, nb = OTF2_IO_OPERATION_FLAG_NON_BLOCKING;
  const uint32_t w = OTF2_IO_OPERATION_MODE_WRITE, r = OTF2_IO_OPERATION_MODE_READ;
  auto off = [](uint64_t v) { return static_cast<int64_t>(v); };
  return {
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
      {"MPI_File_write_at_c", {w, 0, kCInts * 4, off(view + kCOffset * 4)}},
  };
}

TEST(MpiioModule, EveryCallOfEachRankIsRecordedWithItsBytesOffsetsAndPosixWork) {
  ASSERT_TRUE(fs::exists(program("mpiio_calls")))
      << "mpiio_calls was not built: MPICH is missing (run scripts/setup.sh)";
  ASSERT_TRUE(fs::exists(fs::path(EZIO_BINARY).parent_path() / "eztrace/libeztrace-mpiio.so"))
      << "the mpiio module was not built: MPICH or libeztrace-dev is missing";
  fs::path dir = ezio::test::scratch_dir("mpiio-e2e");
  fs::path out = dir / "out";
  auto r =
      ezio::test::eziotrace({"-t", "mpich,mpiio,posixio", "-o", out.string(), "--", "mpiexec.mpich",
                             "-np", "2", program("mpiio_calls"), dir.string()});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  std::map<uint64_t, uint64_t> pid_of_rank;
  std::regex line(R"(rank=(\d) pid=(\d+) done)");
  for (std::sregex_iterator it(r.out.begin(), r.out.end(), line), end; it != end; ++it) {
    pid_of_rank[std::stoul((*it)[1])] = std::stoul((*it)[2]);
  }
  ASSERT_EQ(pid_of_rank.size(), 2u) << r.out;

  // otf2-print reads the merged archive (every rank's MPI-IO definitions) without a warning.
  auto p = ezio::test::run({"otf2-print", "-A", (out / "eziotrace.otf2").string()});
  EXPECT_EQ(p.status, 0);
  EXPECT_EQ(p.err, "") << "otf2-print";

  Archive archive(out / "eziotrace.otf2");
  for (auto [rank, pid] : pid_of_rank) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    std::vector<MpiioCall> calls = archive.calls(pid);
    std::map<std::string, int> count;
    for (const auto& c : calls) ++count[c.name];
    std::map<std::string, int> want = {{"MPI_File_open", 1},
                                       {"MPI_File_write_at_all", 1},
                                       {"MPI_File_write_at", 1},
                                       {"MPI_File_write_shared", 1},
                                       {"MPI_File_set_view", 1},
                                       {"MPI_File_write_all", 1},
                                       {"MPI_File_read_at_all", 1},
                                       {"MPI_File_iwrite_at", 1},
                                       {"MPI_File_write_all_begin", 1},
                                       {"MPI_File_write_all_end", 1},
                                       {"MPI_File_sync", 1},
                                       {"MPI_File_set_size", 1},
                                       {"MPI_File_preallocate", 1},
                                       {"MPI_File_seek", 1},
                                       {"MPI_File_read", 1},
                                       {"MPI_File_write_ordered", 1},
                                       {"MPI_File_write_at_c", 1},
                                       {"MPI_File_close", 1}};
    if (rank == 0) want["MPI_File_delete"] = 1;
    EXPECT_EQ(count, want);

    auto ops = expected_ops(rank);
    for (const auto& c : calls) {
      SCOPED_TRACE(c.name);
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
        EXPECT_EQ(c.create_attributes, (std::map<std::string, uint64_t>{
                                           {"mpiio.comm_size", 2}, {"mpiio.comm_rank", rank}}));
      }
      if (c.name == "MPI_File_write_all_end") {
        EXPECT_TRUE(c.complete_outside);
        EXPECT_EQ(c.bytes_result, kSplitInts * 4);
      }
      // Independent writes: ROMIO's pwrite, and its system call, lie inside the MPI-IO call.
      if (c.name == "MPI_File_write_at" || c.name == "MPI_File_write_shared" ||
          c.name == "MPI_File_write_at_c") {
        EXPECT_TRUE(c.nested.count("pwrite"));
        EXPECT_TRUE(c.nested.count("syscall:pwrite64"));
      }
      // The non-blocking one: ROMIO hands it to glibc's POSIX AIO, whose thread makes the
      // pwrite64 while the rank waits in MPI_Wait (not a call EZTrace's posixio sees).
      if (c.name == "MPI_File_iwrite_at") {
        EXPECT_TRUE(c.completed_after);
        EXPECT_FALSE(c.nested.count("syscall:pwrite64"));
        ASSERT_GT(c.wait_end, c.enter);
        EXPECT_TRUE(
            archive.pwrite_between(c.enter, c.wait_end, ops.at(c.name).offset, kIwriteInts * 4));
      }
    }
  }
}

// Without EZTrace's MPI module the program would abort in EZTrace's finalization: refused before
// anything runs, saying what to add.
TEST(MpiioModule, WithoutTheMpichModuleIsRefusedWithAClearMessage) {
  fs::path dir = ezio::test::scratch_dir("mpiio-e2e-refused");
  for (const char* modules : {"mpiio,posixio", "openmpi,mpiio"}) {
    SCOPED_TRACE(modules);
    auto r = ezio::test::eziotrace({"-t", modules, "-o", (dir / "out").string(), "--", "true"});
    EXPECT_GT(r.status, 0);
    EXPECT_LT(r.status, 128);
    EXPECT_NE(r.err.find("trace with -t mpich,mpiio"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir / "out" / "eziotrace.otf2"));
  }
}

}  // namespace
