// SPDX-License-Identifier: GPL-2.0-only
// The merge through the real binary, real EZTrace and real BPF (root):
// - an MPI program under `eziotrace -t mpich,posixio -- mpirun.mpich -np 2 prog` (EZTrace's MPI
//   mode), and the same program built for Open MPI under `-t openmpi -- mpirun.openmpi`;
// - `eziotrace record -- eztrace -t posixio prog` then `eziotrace merge`, with the alignment data
//   carried by the kernel archive;
// - `eziotrace merge` of a kernel archive without alignment data: a clear error.
#include <gtest/gtest.h>

#include <iostream>
#include <map>
#include <regex>
#include <set>

#include "common/otf2/reader.h"
#include "converters/merge/archive_model.h"
#include "converters/merge/merge.h"
#include "io_threads.h"
#include "run.h"

namespace fs = std::filesystem;
using ezio::test::program;
using ezio::test::run;
using nlohmann::json;

namespace {

using converters_kind = ezio::converters::EventKind;

// The value of a UINT64 system tree node property of an archive (our reader).
uint64_t node_property(const ezio::converters::Definitions& d, const std::string& name) {
  for (const auto& p : d.node_properties) {
    if (d.str(p.name) == name) return p.value.uint64;
  }
  ADD_FAILURE() << "no property " << name;
  return UINT64_MAX;
}

// A region instance on a location with the kernel system calls directly under it.
struct Call {
  std::string name;
  std::vector<std::string> syscalls;
};

// The fd argument of a system call's ENTER, -1 when absent.
int64_t syscall_fd(const ezio::converters::Definitions& d, const ezio::converters::Event& e) {
  for (const auto& a : e.attributes) {
    if (d.str(d.attributes.at(a.id).name) == "syscall.fd") return a.value.int64;
  }
  return -1;
}

// The user-level (EZTrace) calls of a location, each with the syscalls nested in it. Writes to
// stderr are left out: EZTrace's MPI ranks other than 0 print OTF2 errors from inside the user
// call that makes them define an I/O handle (docs/merge.md).
std::vector<Call> user_calls(const ezio::converters::Definitions& d,
                             const std::vector<ezio::converters::Event>& events) {
  std::vector<Call> out;
  std::vector<std::pair<std::string, int>> stack;  // canonical name, index in out (-1: kernel)
  for (const auto& e : events) {
    if (e.kind != converters_kind::Enter && e.kind != converters_kind::Leave) continue;
    std::string canonical = d.str(d.regions.at(e.ref).canonical);
    bool kernel = !ezio::converters::region_layer(canonical).empty();
    if (e.kind == converters_kind::Leave) {
      EXPECT_FALSE(stack.empty());
      if (!stack.empty()) stack.pop_back();
      continue;
    }
    if (kernel) {
      bool stderr_write = canonical == "syscall:write" && syscall_fd(d, e) == 2;
      if (!stack.empty() && stack.back().second >= 0 && canonical.starts_with("syscall:") &&
          !stderr_write) {
        out[stack.back().second].syscalls.push_back(canonical);
      }
      stack.push_back({canonical, -1});
    } else {
      out.push_back({canonical, {}});
      stack.push_back({canonical, static_cast<int>(out.size() - 1)});
    }
  }
  return out;
}

// otf2-print and ViTE accept the archive; python3-otf2 reads it through tests/support (strict:
// regions must nest).
void expect_readers_accept(const fs::path& anchor) {
  auto p = run({"otf2-print", "-A", anchor.string()});
  EXPECT_EQ(p.status, 0);
  EXPECT_EQ(p.err, "") << "otf2-print";
  json j = ezio::test::dump_archive(anchor);
  EXPECT_FALSE(j["locations"].empty());
  auto v = run(
      {"timeout", "300", "vite", anchor.string(), "-e", (anchor.parent_path() / "x.svg").string()},
      {"QT_QPA_PLATFORM=offscreen"});
  EXPECT_NE(v.status, 124) << "vite timed out";
  EXPECT_NE((v.out + v.err).find("0 errors and 0 warnings"), std::string::npos) << v.out << v.err;
}

// --- MPI
// ------------------------------------------------------------------------------------------

// An MPI, its EZTrace module, its launcher and mpi_io built for it.
struct MpiRun {
  std::string module, program;
  std::vector<std::string> launcher;
};

class MpiMerge : public testing::TestWithParam<MpiRun> {};

TEST_P(MpiMerge, MpiRanksUnderEziotraceAreMergedAndAligned) {
  const MpiRun& mpi = GetParam();
  ASSERT_TRUE(fs::exists(program(mpi.program)))
      << mpi.program << " was not built: its MPI is missing (run scripts/setup.sh)";
  fs::path dir = ezio::test::scratch_dir("merge-e2e-mpi-" + mpi.module);
  fs::path out = dir / "out";
  std::vector<std::string> args = {"-t", mpi.module + ",posixio", "-o", out.string(), "--"};
  args.insert(args.end(), mpi.launcher.begin(), mpi.launcher.end());
  args.insert(args.end(), {program(mpi.program), dir.string()});
  auto r = ezio::test::eziotrace(args);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  std::map<int, uint32_t> pid_of_rank;
  std::regex line(R"(rank=(\d) pid=(\d+) token=42)");
  for (std::sregex_iterator it(r.out.begin(), r.out.end(), line), end; it != end; ++it) {
    pid_of_rank[std::stoi((*it)[1])] = std::stoul((*it)[2]);
  }
  ASSERT_EQ(pid_of_rank.size(), 2u) << r.out;

  fs::path anchor = out / "eziotrace.otf2";
  auto merged = ezio::converters::read_archive(anchor);
  const auto& d = merged.defs;
  EXPECT_EQ(node_property(d, "EZIOTRACE::ALIGNMENT_VIOLATIONS"), 0u);
  EXPECT_EQ(node_property(d, "EZIOTRACE::EZTRACE_PROCESSES"), 2u);
  EXPECT_EQ(node_property(d, "EZIOTRACE::ALIGNMENT_CHECKED_CALLS"), 2u * 6u);

  // Both ranks: their process's kernel thread location holds their EZTrace calls, each with
  // exactly its system call inside (mpi_io.c: open, write, close, open, read, close).
  using Names = std::vector<std::string>;
  const std::map<std::string, Names> syscall_of = {{"open", {"syscall:openat"}},
                                                   {"write", {"syscall:write"}},
                                                   {"read", {"syscall:read"}},
                                                   {"close", {"syscall:close"}}};
  for (auto [rank, pid] : pid_of_rank) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    auto ev = merged.events.find(pid);
    ASSERT_NE(ev, merged.events.end()) << "no location for pid " << pid;
    Names io;
    bool mpi_call = false;
    for (const auto& c : user_calls(d, ev->second)) {
      if (auto s = syscall_of.find(c.name); s != syscall_of.end()) {
        io.push_back(c.name);
        EXPECT_EQ(c.syscalls, s->second) << c.name;
      }
      mpi_call = mpi_call || c.name == (rank == 0 ? "MPI_Send" : "MPI_Recv");
    }
    EXPECT_EQ(io, (Names{"open", "write", "close", "open", "read", "close"}));
    EXPECT_TRUE(mpi_call);
  }

  // The MPI events, read by python3-otf2 with their communicator: MPI_COMM_WORLD, whose ranks
  // are the two processes, so that each message's peer is the other rank's location.
  auto py =
      run({"/usr/bin/python3", EZIO_TEST_SUPPORT_DIR "/otf2_dump.py", "--mpi", anchor.string()});
  ASSERT_EQ(py.status, 0) << py.err;
  json j = json::parse(py.out);
  EXPECT_TRUE(j["warnings"].empty()) << j["warnings"];
  json ranks = {pid_of_rank.at(0), pid_of_rank.at(1)};
  std::map<std::string, int> kinds;
  for (const auto& e : j["events"]) {
    ++kinds[e["k"]];
    if (!e.contains("comm")) continue;
    EXPECT_EQ(e["comm"], "MPI_COMM_WORLD");
    EXPECT_EQ(e["members"], ranks);
    if (e["k"] == "MpiSend") {
      EXPECT_EQ(e["peer"], ranks[1]);
    }
    if (e["k"] == "MpiRecv") {
      EXPECT_EQ(e["peer"], ranks[0]);
    }
  }
  EXPECT_EQ(kinds["MpiSend"], 1);
  EXPECT_EQ(kinds["MpiRecv"], 1);
  EXPECT_EQ(kinds["MpiCollectiveEnd"], 2);
  // otf2-print reads it all without a warning. Not checked here, for reasons of the readers
  // (docs/merge.md): python3-otf2 through tests/support, which wants regions to nest (EZTrace's
  // rank 1 leaves "Working" inside "EZTrace finalize", and the user events are kept as EZTrace
  // wrote them); ViTE 1.2, which finds a communicator's ranks only when its group is a
  // COMM_LOCATIONS group (OTF2 forbids that: otf2-print warns) and otherwise crashes in its
  // MpiSend callback.
  auto p = run({"otf2-print", "-A", anchor.string()});
  EXPECT_EQ(p.status, 0);
  EXPECT_EQ(p.err, "") << "otf2-print";
}

// As root, Open MPI's launcher wants --allow-run-as-root.
INSTANTIATE_TEST_SUITE_P(Mpis, MpiMerge,
                         testing::Values(MpiRun{"mpich", "mpi_io", {"mpirun.mpich", "-np", "2"}},
                                         MpiRun{"openmpi",
                                                "mpi_io_openmpi",
                                                {"mpirun.openmpi", "--allow-run-as-root",
                                                 "--oversubscribe", "-np", "2"}}),
                         [](const testing::TestParamInfo<MpiRun>& info) {
                           return info.param.module;
                         });

// --- eziotrace record, then eziotrace merge -----------------------------------------------------

TEST(MergeEndToEnd, RecordCarriesTheAlignmentDataAndMergeUsesIt) {
  fs::path dir = ezio::test::scratch_dir("merge-e2e-record");
  fs::path ez = dir / "ez", kernel = dir / "kernel";
  fs::create_directories(ez);
  auto r = run({EZIO_BINARY, "record", "-o", kernel.string(), "--", "eztrace", "-t", "posixio",
                program("io_threads"), dir.string(), program("io_child")},
               {"EZTRACE_TRACE_DIR=" + ez.string()});
  ASSERT_EQ(r.status, IO_THREADS_EXIT_STATUS) << r.out << r.err;
  // The helper's files are in the kernel archive, and nothing is left beside it.
  std::vector<fs::path> sidecars;
  for (const auto& e : fs::directory_iterator(kernel / "eziotrace-alignment")) {
    sidecars.push_back(e.path());
  }
  ASSERT_FALSE(sidecars.empty());
  EXPECT_FALSE(fs::exists(dir / "kernel.alignment"));

  fs::path out = dir / "merged";
  auto m = run({EZIO_BINARY, "merge", (ez / "io_threads_trace").string(), kernel.string(), "-o",
                out.string()});
  ASSERT_EQ(m.status, 0) << m.out << m.err;
  fs::path anchor = out / "eziotrace.otf2";
  auto merged = ezio::converters::read_archive(anchor);
  const auto& d = merged.defs;
  EXPECT_EQ(node_property(d, "EZIOTRACE::ALIGNMENT_VIOLATIONS"), 0u);
  EXPECT_EQ(node_property(d, "EZIOTRACE::EZTRACE_PROCESSES"), sidecars.size());
  // io_threads' posix thread: open, write, pwrite, pread, lseek, read, close, each checked.
  EXPECT_GE(node_property(d, "EZIOTRACE::ALIGNMENT_CHECKED_CALLS"), 7u);
  EXPECT_GT(node_property(d, "EZIOTRACE::EZTRACE_OWN_IO_FILTERED"), 0u);

  // The user events are EZTrace's, all of them (every program it traced).
  size_t user_events = 0, original_events = 0, archives = 0;
  for (const auto& [loc, events] : merged.events) {
    for (const auto& e : events) user_events += ezio::converters::is_user_event(d, e);
  }
  for (const auto& e : fs::directory_iterator(ez)) {
    if (!fs::exists(e.path() / "eztrace_log.otf2")) continue;
    ++archives;
    auto original = ezio::converters::read_archive(e.path() / "eztrace_log.otf2");
    for (const auto& [loc, events] : original.events) original_events += events.size();
  }
  EXPECT_EQ(archives, sidecars.size());
  EXPECT_EQ(user_events, original_events);

  // EZTrace's `rm -rf` child is gone, with its page-cache location; no block request points to
  // a call the archive does not have.
  for (const auto& [loc, def] : d.locations) {
    EXPECT_FALSE(d.str(def.name).starts_with("rm [")) << d.str(def.name);
    EXPECT_FALSE(d.str(def.name).starts_with("pagecache rm [")) << d.str(def.name);
  }
  std::set<uint64_t> calls, linked;
  for (const auto& [loc, events] : merged.events) {
    for (const auto& e : events) {
      for (const auto& a : e.attributes) {
        if (d.str(d.attributes.at(a.id).name) != "call.id") continue;
        if (e.kind == converters_kind::Enter) calls.insert(a.value.uint64);
        if (e.kind == converters_kind::IoOperationBegin && a.value.uint64) {
          linked.insert(a.value.uint64);
        }
      }
    }
  }
  for (uint64_t id : linked) EXPECT_TRUE(calls.count(id)) << "dangling call.id " << id;
  expect_readers_accept(anchor);
}

TEST(MergeEndToEnd, MergeWithoutAlignmentDataSaysWhatIsMissing) {
  fs::path dir = ezio::test::scratch_dir("merge-e2e-no-alignment");
  fs::path kernel = dir / "kernel";
  auto r = ezio::test::eziotrace({"record", "-o", kernel.string(), "--", "true"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(fs::exists(kernel / "eziotrace-alignment"));  // no EZTrace in that command
  auto m = ezio::test::eziotrace(
      {"merge", dir.string(), kernel.string(), "-o", (dir / "merged").string()});
  EXPECT_NE(m.status, 0);
  EXPECT_NE(m.err.find("no alignment data"), std::string::npos) << m.err;
  EXPECT_NE(m.err.find((kernel / "eziotrace-alignment").string()), std::string::npos) << m.err;
  EXPECT_FALSE(fs::exists(dir / "merged" / "eziotrace.otf2"));
}

// --- memory: the merge streams ------------------------------------------------------------------

// Counts an archive's events, streamed (this test's own memory stays small too).
class EventCounter : public ezio::otf2::EventVisitor {
 public:
  void event(OTF2_LocationRef, const ezio::otf2::Event&) override { ++events; }
  uint64_t events = 0;
};

struct MergedDd {
  uint64_t events = 0;
  long run_rss_kb = 0, merge_rss_kb = 0;
};

// The recorder maps its ring buffer's pages as its records first reach them (RingReader): a ring
// small enough that both runs go round it several times has all its pages mapped in both, so that
// what is compared is what grows with the recording's length, not how far it got into the ring.
constexpr int kFlatMemoryRingMiB = 8;

// eziotrace's own peak memory, as -v logs it: the peak wait4() gives covers the application too,
// whose EZTrace buffers grow with its run.
long own_peak_memory_kb(const std::string& log) {
  const std::string key = "eziotrace's own peak memory: ";
  size_t at = log.find(key);
  EXPECT_NE(at, std::string::npos) << "no peak memory in the -v log";
  return at == std::string::npos ? 0 : std::stol(log.substr(at + key.size()));
}

// `eziotrace --keep-parts -- dd bs=1 count=bytes`, then `eziotrace merge` of the kept parts.
MergedDd merge_dd(const fs::path& dir, const std::string& name, int bytes) {
  fs::path out = dir / name;
  auto r = ezio::test::eziotrace({"-v", "-o", out.string(), "--keep-parts", "--ring-buffer",
                                  std::to_string(kFlatMemoryRingMiB), "--", "dd", "if=/dev/zero",
                                  "of=" + (dir / (name + ".data")).string(), "bs=1",
                                  "count=" + std::to_string(bytes)});
  EXPECT_EQ(r.status, 0) << r.err;
  fs::path parts = dir / (name + ".parts");
  fs::path merged = dir / (name + ".merged");
  auto m =
      ezio::test::eziotrace({"merge", (parts / "eztrace/eztrace").string(), "--alignment",
                             (parts / "eztrace/eziotrace-alignment").string(),
                             (parts / "kernel/eziotrace.otf2").string(), "-o", merged.string()});
  EXPECT_TRUE(m.status == 0 || m.status == 3) << m.status << m.err;
  EventCounter counter;
  ezio::otf2::ArchiveReader(merged / "eziotrace.otf2").read_events(counter);
  long own_kb = own_peak_memory_kb(r.err);
  std::cerr << name << ": " << counter.events << " events; peak RSS " << own_kb / 1024
            << " MiB recording and merging, " << m.max_rss_kb / 1024 << " MiB merging again\n";
  return {counter.events, own_kb, m.max_rss_kb};
}

// The merge's memory does not grow with the length of the recording (both archives
// are streamed; the kernel spans' summaries are on disk). What it holds is OTF2's buffers: a
// reader of EZTrace's archive keeps up to two of its 16 MiB chunks, so the short run is long
// enough to fill them (~6 M events; below that the merge needs less). The whole merged run is
// held to it too: the recorder holds a bounded number of records, and the copy of the kernel
// events it gives the merge while it writes them (docs/merge.md, "After the application ends")
// is on disk, 1 MiB buffered. dd at full speed makes the recorder lose
// events at times (the merge then reports violations, exit status 3): the merge is measured
// all the same. The recording's own memory may differ by what its bounded buffers hold (records
// in the store, queued for the writer, in the batch being written: ~12 MB each, record.cpp):
// they fill when the writer falls behind, which on a loaded machine the long run does for longer
// (1.41x in one CI run while a qemu guest took both cores).
TEST(MergeEndToEnd, LongRecordingMergesInTheMemoryOfAShortOne) {
  fs::path dir = ezio::test::scratch_dir("merge-e2e-flat-memory");
  MergedDd small = merge_dd(dir, "short", 300'000);
  MergedDd large = merge_dd(dir, "long", 1'000'000);  // 3.3x: at least 2x after losses
  ASSERT_GE(small.events, 5'000'000u);
  ASSERT_GE(large.events, 2 * small.events);
  EXPECT_LE(static_cast<double>(large.merge_rss_kb), 1.3 * static_cast<double>(small.merge_rss_kb));
  constexpr double kBoundedBuffersKb = 36.0 * 1024;
  EXPECT_LE(static_cast<double>(large.run_rss_kb),
            1.3 * static_cast<double>(small.run_rss_kb) + kBoundedBuffersKb);
}

}  // namespace
