// The merge on a real EZTrace run of io_threads (3 threads, an exec'd child), and of mpi_io under
// mpirun in EZTrace's MPI mode, each with a kernel archive synthesized from it
// (synthetic_kernel.cpp): alignment, filtering, EZTrace's groups and communicators, one-for-one
// user events, and the readers' verdicts (otf2-print, python3-otf2, ViTE).
#include "converters/merge/merge.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>

#include "converters/eztrace/environment.h"
#include "io_threads.h"
#include "run.h"
#include "synthetic_kernel.h"

namespace ezio::test {
namespace {
using converters::Event;
using converters::EventKind;

struct Fixture {
  converters::EztraceSetup setup;
  std::vector<converters::EztraceInput> inputs;
  std::filesystem::path dir;
  std::string app_out;
};

// Runs io_threads under EZTrace + the helper once for all tests.
const Fixture& traced_run() {
  static Fixture f = [] {
    Fixture x;
    x.dir = scratch_dir("merge_run");
    setenv("EZIOTRACE_PRELOAD_HELPER", EZIO_PRELOAD_HELPER, 1);
    x.setup = converters::prepare_eztrace({"posixio"}, x.dir / "work");
    ezio::test::Run r =
        run({program("io_threads"), x.dir.string(), program("io_child")}, x.setup.env);
    EXPECT_EQ(r.status, IO_THREADS_EXIT_STATUS) << r.err;
    x.app_out = r.out;
    std::vector<std::string> warnings;
    x.inputs = converters::load_eztrace_inputs(x.setup.sidecar_dir, warnings);
    EXPECT_TRUE(warnings.empty()) << warnings.front();
    return x;
  }();
  return f;
}

// Per thread location: the user-level events as (kind, region name) in order.
using Sequence = std::vector<std::pair<std::string, std::string>>;
std::string describe(const converters::Definitions& d, const Event& e) {
  if (e.kind == EventKind::Enter || e.kind == EventKind::Leave) {
    return d.regions.count(e.ref) ? d.str(d.regions.at(e.ref).name) : "?";
  }
  return "";
}

TEST(Merge, RunProducesTwoProcessesWithAlignmentData) {
  const auto& f = traced_run();
  ASSERT_EQ(f.inputs.size(), 2u);  // io_threads and the exec'd io_child
  EXPECT_EQ(f.inputs[0].process.program, "io_threads");
  EXPECT_EQ(f.inputs[1].process.program, "io_child");
  EXPECT_EQ(f.inputs[1].process.ppid, f.inputs[0].process.pid);
  EXPECT_EQ(f.inputs[0].process.threads.size(), 4u);  // main + 3 threads
  EXPECT_TRUE(f.inputs[0].process.ctor_before_eztrace);
  for (const auto& in : f.inputs) EXPECT_GT(in.process.first_timestamp, in.process.ctor_ns);
  // The TIDs the program saw are the ones the sidecar maps EZTrace's locations to.
  for (const auto& t : f.inputs[0].process.threads) {
    if (t.rank == 0) continue;
    EXPECT_NE(f.app_out.find(fmt::format("={}", t.tid)), std::string::npos) << f.app_out;
  }
}

struct Merged {
  converters::MergeReport report;
  converters::Archive archive;
  SyntheticCounts counts;
  std::filesystem::path anchor;
};

Merged merge_with_synthetic(const std::string& name, int64_t shift_ns,
                            const Fixture& f = traced_run(), uint64_t lost_syscalls = 0) {
  auto dir = scratch_dir(name);
  auto kernel_inputs = f.inputs;
  Merged m;
  m.counts = write_synthetic_kernel(kernel_inputs, dir / "kernel", lost_syscalls);
  auto inputs = f.inputs;
  for (auto& in : inputs) in.process.first_timestamp += shift_ns;
  m.report = converters::merge_archives(inputs, dir / "kernel/eziotrace.otf2", dir / "merged",
                                        {f.setup.sidecar_dir, f.setup.trace_dir});
  m.anchor = dir / "merged/eziotrace.otf2";
  m.archive = converters::read_archive(m.anchor);
  return m;
}

// The merged mode takes the kernel events from the copy the recorder made while writing its
// archive (otf2::EventTap) instead of decoding the archive: the merged archive is the same, file
// for file.
TEST(Merge, KernelEventsFromTheWritersCopyMergeIntoTheSameArchive) {
  const Fixture& f = traced_run();
  auto dir = scratch_dir("merge-tapped");
  auto copy = std::make_unique<converters::EventStore>(dir);
  write_synthetic_kernel(f.inputs, dir / "kernel", 0, copy.get());
  std::vector<std::filesystem::path> own = {f.setup.sidecar_dir, f.setup.trace_dir};
  auto load = [&f] { return f.inputs; };
  auto decoded =
      converters::merge_archives(load, dir / "kernel/eziotrace.otf2", dir / "decoded", own, {});
  auto tapped = converters::merge_archives(load, dir / "kernel/eziotrace.otf2", dir / "tapped", own,
                                           {}, std::move(copy));
  EXPECT_EQ(decoded.kernel_events, tapped.kernel_events);
  EXPECT_EQ(decoded.user_events, tapped.user_events);
  EXPECT_GT(tapped.kernel_events, 0u);
  EXPECT_TRUE(tapped.kernel_events_recorded);  // the copy was used, the archive not decoded
  EXPECT_FALSE(decoded.kernel_events_recorded);
  auto bytes = [](const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  // Every file but the anchor, which holds its creation time.
  size_t compared = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir / "decoded")) {
    if (!entry.is_regular_file() || entry.path().extension() == ".otf2") continue;
    auto other = dir / "tapped" / std::filesystem::relative(entry.path(), dir / "decoded");
    ASSERT_TRUE(std::filesystem::exists(other)) << other;
    EXPECT_TRUE(bytes(entry.path()) == bytes(other)) << other << " differs";
    ++compared;
  }
  EXPECT_GT(compared, 2u);
}

TEST(Merge, AlignedInputHasNoViolationAndEveryCallChecked) {
  auto m = merge_with_synthetic("aligned", 0);
  EXPECT_EQ(m.report.violations, 0u)
      << (m.report.violation_details.empty() ? "" : m.report.violation_details.front());
  EXPECT_EQ(m.report.checked_calls, DIRECT_CALLS);
  EXPECT_EQ(m.report.own_io_calls, m.counts.own_io_calls + 2u);  // + one rm call per process
  EXPECT_EQ(m.report.own_io_processes, 2u);
  EXPECT_EQ(m.report.clamped_events, 0u);
  EXPECT_EQ(m.report.unsupported_events, 0u);
  const auto& d = m.archive.defs;
  bool found = false;
  for (const auto& p : d.node_properties) {
    if (d.str(p.name) == "EZIOTRACE::ALIGNMENT_VIOLATIONS") {
      found = true;
      EXPECT_EQ(p.value.uint64, 0u);
    }
  }
  EXPECT_TRUE(found);
}

// With system-call events lost, a user call without its system call may have lost it: counted
// as unverifiable, in the report and the archive, not as a violation.
TEST(Merge, MissingSyscallsAreUnverifiableWhenTheKernelLostSyscalls) {
  auto exact = merge_with_synthetic("misaligned_lossless", 1'000'000);
  auto lossy = merge_with_synthetic("misaligned_lossy", 1'000'000, traced_run(), 5);
  EXPECT_EQ(exact.report.unverifiable_calls, 0u);
  EXPECT_GT(lossy.report.unverifiable_calls, 0u);
  EXPECT_EQ(lossy.report.syscalls_lost, 5u);
  EXPECT_EQ(lossy.report.violations + lossy.report.unverifiable_calls, exact.report.violations);
  const auto& d = lossy.archive.defs;
  EXPECT_EQ(d.node_property("EZIOTRACE::ALIGNMENT_UNVERIFIABLE"), lossy.report.unverifiable_calls);
  EXPECT_EQ(d.node_property("EZIOTRACE::ALIGNMENT_VIOLATIONS"), lossy.report.violations);
}

TEST(Merge, UserEventsEqualEztraceOneForOne) {
  const auto& f = traced_run();
  auto m = merge_with_synthetic("one_for_one", 0);
  const auto& md = m.archive.defs;
  size_t total = 0;
  for (const auto& in : f.inputs) {
    const converters::Archive original = converters::read_archive(in.archive->anchor);
    for (const auto& t : in.process.threads) {
      Sequence want, got;
      auto ev = original.events.find(t.location);
      if (ev != original.events.end()) {
        for (const auto& e : ev->second) {
          want.emplace_back(converters::event_kind_name(e.kind), describe(in.archive->defs, e));
        }
      }
      auto mev = m.archive.events.find(t.tid);  // thread locations are TIDs
      ASSERT_NE(mev, m.archive.events.end()) << "tid " << t.tid;
      for (const auto& e : mev->second) {
        if (converters::is_user_event(md, e)) {
          got.emplace_back(converters::event_kind_name(e.kind), describe(md, e));
        }
      }
      EXPECT_EQ(got, want) << in.process.program << " tid " << t.tid;
      total += want.size();
    }
  }
  EXPECT_EQ(m.report.user_events, total);
}

TEST(Merge, EachDirectUserCallContainsExactlyItsSystemCall) {
  auto m = merge_with_synthetic("nesting", 0);
  const auto& d = m.archive.defs;
  std::map<std::string, int> fwrite_syscalls;
  for (const auto& [loc, events] : m.archive.events) {
    std::vector<std::pair<std::string, std::vector<std::string>>> stack;
    for (const auto& e : events) {
      if (e.kind != EventKind::Enter && e.kind != EventKind::Leave) continue;
      std::string canonical = d.str(d.regions.at(e.ref).canonical);
      if (e.kind == EventKind::Enter) {
        if (!converters::region_layer(canonical).empty() && !stack.empty()) {
          stack.back().second.push_back(canonical);
        }
        stack.push_back({canonical, {}});
        continue;
      }
      auto [name, inner] = stack.back();
      stack.pop_back();
      using V = std::vector<std::string>;
      if (name == "write") {
        EXPECT_EQ(inner, V{"syscall:write"});
      }
      if (name == "read") {
        EXPECT_EQ(inner, V{"syscall:read"});
      }
      if (name == "pwrite") {
        EXPECT_EQ(inner, V{"syscall:pwrite64"});
      }
      if (name == "pread") {
        EXPECT_EQ(inner, V{"syscall:pread64"});
      }
      if (name == "open") {
        EXPECT_EQ(inner, V{"syscall:openat"});
      }
      if (name == "fwrite") {
        EXPECT_EQ(inner, V{});  // buffered: no system call of its own
      }
      if (name == "syscall:fsync") {
        EXPECT_EQ(stack.size(), 1u);  // only inside "Working"
      }
    }
    EXPECT_TRUE(stack.empty());
  }
}

TEST(Merge, UserHandlesShareTheKernelFile) {
  auto m = merge_with_synthetic("files", 0);
  const auto& d = m.archive.defs;
  // Every user ("posix io") handle whose open the kernel saw points to the kernel's file.
  size_t tied = 0;
  for (const auto& [ref, h] : d.io_handles) {
    if (d.str(d.io_paradigms.at(h.paradigm).identification) == "linux") continue;
    auto path = d.handle_path(ref);
    ASSERT_TRUE(path);
    if (path->find("file-of-") != std::string::npos) ++tied;
  }
  EXPECT_EQ(tied, 5u);  // posix.dat, stdio.dat x2 (fopen), child.dat x2
}

TEST(Merge, ReadersAcceptTheMergedArchive) {
  auto m = merge_with_synthetic("readers", 0);
  ezio::test::Run p = run({"otf2-print", m.anchor.string()});
  EXPECT_EQ(p.status, 0);
  EXPECT_EQ(p.err.find("warning"), std::string::npos) << p.err.substr(0, 500);
  nlohmann::json j = dump_archive(m.anchor);  // python3-otf2, strict
  EXPECT_FALSE(j["locations"].empty());
  ezio::test::Run v =
      run({"vite", m.anchor.string(), "-e", (m.anchor.parent_path() / "x.svg").string()},
          {"QT_QPA_PLATFORM=offscreen"});
  EXPECT_NE((v.out + v.err).find("0 errors and 0 warnings"), std::string::npos) << v.out << v.err;
}

TEST(Merge, MisalignedInputIsReportedInTheArchive) {
  auto m = merge_with_synthetic("misaligned", 1'000'000);  // EZTrace clock off by 1 ms
  EXPECT_GT(m.report.violations, 0u);
  const auto& d = m.archive.defs;
  for (const auto& p : d.node_properties) {
    if (d.str(p.name) == "EZIOTRACE::ALIGNMENT_VIOLATIONS") {
      EXPECT_EQ(p.value.uint64, m.report.violations);
    }
  }
}

}  // namespace
}  // namespace ezio::test

namespace ezio::test {
namespace {

// --- EZTrace's groups and communicators, and what the merge drops with EZTrace's own I/O -------

// The id of each definition is its index: dense, as the merge promises.
template <typename Defs>
void expect_dense_ids(const Defs& defs, const char* what) {
  std::set<converters::Ref> ids;
  for (const auto& d : defs) ids.insert(d.id);
  EXPECT_EQ(ids.size(), defs.size()) << what << " defined twice";
  if (!ids.empty()) {
    EXPECT_EQ(*ids.rbegin(), defs.size() - 1) << what << " ids not dense";
  }
}

const converters::CommDef* comm_named(const converters::Definitions& d, const std::string& name) {
  for (const auto& c : d.comms) {
    if (d.str(c.name) == name) return &c;
  }
  return nullptr;
}

TEST(Merge, EztraceGroupsAndCommsAreKeptDenseWithoutDuplicates) {
  const auto& f = traced_run();
  // EZTrace's own archive defines group 0 and comm 0 twice (docs/merge.md).
  ASSERT_GT(f.inputs[0].archive->defs.duplicate_definitions, 0u);
  auto m = merge_with_synthetic("comms", 0);
  const auto& d = m.archive.defs;
  EXPECT_EQ(d.duplicate_definitions, 0u);
  expect_dense_ids(d.groups, "group");
  expect_dense_ids(d.comms, "comm");
  EXPECT_EQ(m.report.comms, d.comms.size());
  EXPECT_EQ(m.report.groups, d.groups.size());
  // One COMM_LOCATIONS group, first, listing each process's EZTrace location 0 as its kernel TID.
  ASSERT_FALSE(d.groups.empty());
  EXPECT_EQ(d.groups[0].type, OTF2_GROUP_TYPE_COMM_LOCATIONS);
  std::vector<uint64_t> mains;
  for (const auto& in : f.inputs) {
    for (const auto& t : in.process.threads) {
      if (t.location == 0) mains.push_back(t.tid);
    }
  }
  EXPECT_EQ(d.groups[0].members, mains);
  for (size_t i = 1; i < d.groups.size(); ++i) {
    EXPECT_EQ(d.groups[i].type, OTF2_GROUP_TYPE_COMM_GROUP) << i;
  }
  // Every comm names a COMM_GROUP; no two comms are the same.
  std::set<std::tuple<std::string, size_t, converters::Ref>> seen;
  for (const auto& c : d.comms) {
    ASSERT_LT(c.group_index, d.groups.size()) << d.str(c.name);
    EXPECT_EQ(d.groups[c.group_index].type, OTF2_GROUP_TYPE_COMM_GROUP) << d.str(c.name);
    EXPECT_TRUE(seen.insert({d.str(c.name), c.group_index, c.parent}).second) << d.str(c.name);
  }
  // EZTrace's handles keep their communicator, MPI_Comm_Self, as EZTrace defined it.
  size_t user_handles = 0;
  for (const auto& [ref, h] : d.io_handles) {
    if (d.str(d.io_paradigms.at(h.paradigm).identification) == "linux") continue;
    ++user_handles;
    ASSERT_LT(h.comm_index, d.comms.size()) << d.str(h.name);
    EXPECT_EQ(d.str(d.comms[h.comm_index].name), "MPI_Comm_Self") << d.str(h.name);
  }
  EXPECT_GT(user_handles, 0u);
  ezio::test::Run p = run({"otf2-print", "-A", m.anchor.string()});
  EXPECT_EQ(p.status, 0);
  EXPECT_EQ(p.err, "");
}

TEST(Merge, EztraceOwnIoLeavesNoDanglingCallLinkNorRmLocation) {
  auto m = merge_with_synthetic("own_io_links", 0);
  ASSERT_NE(m.counts.own_block_call, 0u);
  ASSERT_NE(m.counts.app_block_call, 0u);
  const auto& d = m.archive.defs;
  // No location of EZTrace's `rm` children is left, the page-cache metric locations included.
  for (const auto& [loc, def] : d.locations) {
    EXPECT_EQ(d.str(def.name).find("rm ["), std::string::npos) << d.str(def.name);
  }
  for (const auto& [ref, g] : d.location_groups) {
    EXPECT_EQ(d.str(g.name).find("rm ["), std::string::npos) << d.str(g.name);
  }
  // Every call.id on a block request is the call.id of a system call of the archive.
  converters::Ref call_id = OTF2_UNDEFINED_ATTRIBUTE;
  for (const auto& [ref, a] : d.attributes) {
    if (d.str(a.name) == "call.id") call_id = ref;
  }
  ASSERT_NE(call_id, OTF2_UNDEFINED_ATTRIBUTE);
  std::set<uint64_t> calls;
  std::vector<uint64_t> linked;
  size_t request_events = 0;
  for (const auto& [loc, events] : m.archive.events) {
    for (const auto& e : events) {
      for (const auto& a : e.attributes) {
        if (a.id != call_id) continue;
        if (e.kind == EventKind::Enter) calls.insert(a.value.uint64);
        if (e.kind == EventKind::IoOperationBegin) linked.push_back(a.value.uint64);
      }
      request_events += e.kind == EventKind::IoOperationIssued;
    }
  }
  EXPECT_EQ(linked, std::vector<uint64_t>{m.counts.app_block_call});
  for (uint64_t id : linked) EXPECT_TRUE(calls.count(id)) << "dangling call.id " << id;
  EXPECT_EQ(request_events, 1u);  // the dropped request's issue and completion went with it
  EXPECT_EQ(m.report.own_io_block_requests, 1u);
}

// --- EZTrace's MPI mode -------------------------------------------------------------------------

struct MpiFixture : Fixture {
  std::map<int, uint32_t> pid_of_rank;
};

// Runs mpi_io under mpirun with EZTrace's mpich and posixio modules and the helper, once.
const MpiFixture& mpi_traced_run() {
  static MpiFixture f = [] {
    MpiFixture x;
    x.dir = scratch_dir("merge_mpi_run");
    if (!std::filesystem::exists(program("mpi_io"))) {
      ADD_FAILURE() << "mpi_io was not built: MPICH is missing (run scripts/setup.sh)";
      return x;
    }
    setenv("EZIOTRACE_PRELOAD_HELPER", EZIO_PRELOAD_HELPER, 1);
    x.setup = converters::prepare_eztrace({"mpich", "posixio"}, x.dir / "work");
    std::vector<std::string> env;
    auto cmd = converters::eztrace_command(
        x.setup, {"mpirun.mpich", "-np", "2", program("mpi_io"), x.dir.string()}, env);
    // The launcher gets EZTrace's libraries through -genv only (converters/eztrace/mpich.cpp).
    EXPECT_EQ(cmd[1], "-genv");
    for (const auto& e : env) EXPECT_FALSE(e.starts_with("LD_PRELOAD=")) << e;
    cmd.insert(cmd.begin(), {"timeout", "120"});
    ezio::test::Run r = run(cmd, env);
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    x.app_out = r.out;
    std::regex line(R"(rank=(\d) pid=(\d+) token=42)");
    for (std::sregex_iterator it(r.out.begin(), r.out.end(), line), end; it != end; ++it) {
      x.pid_of_rank[std::stoi((*it)[1])] = std::stoul((*it)[2]);
    }
    std::vector<std::string> warnings;
    x.inputs = converters::load_eztrace_inputs(x.setup.sidecar_dir, warnings);
    EXPECT_TRUE(warnings.empty()) << warnings.front();
    return x;
  }();
  return f;
}

TEST(MergeMpi, RanksShareOneArchiveEachWithItsOwnLocationAndClock) {
  const auto& f = mpi_traced_run();
  ASSERT_EQ(f.pid_of_rank.size(), 2u) << f.app_out;
  ASSERT_EQ(f.inputs.size(), 2u);
  EXPECT_EQ(f.inputs[0].archive, f.inputs[1].archive);  // one eztrace_log.otf2 for both ranks
  std::set<uint32_t> pids;
  std::set<OTF2_LocationRef> locations;
  for (const auto& in : f.inputs) {
    pids.insert(in.process.pid);
    EXPECT_EQ(in.process.program, "mpi_io");
    ASSERT_EQ(in.locations.size(), 1u);
    EXPECT_TRUE(locations.insert(in.locations[0]).second);
    // EZTrace stamps MPI mode with MPI_Wtime; the helper measured it against CLOCK_MONOTONIC.
    EXPECT_EQ(in.process.clock, "MPI_Wtime");
    EXPECT_LE(in.process.clock_offset_error_ns, 1u) << "root reads /proc/timer_list: exact";
    EXPECT_NE(in.process.time_offset(), in.process.first_timestamp);
  }
  EXPECT_EQ(pids, (std::set<uint32_t>{f.pid_of_rank.at(0), f.pid_of_rank.at(1)}));
}

TEST(MergeMpi, MergedRanksAreAlignedAndKeepTheirCommunicators) {
  const auto& f = mpi_traced_run();
  ASSERT_EQ(f.inputs.size(), 2u);
  auto m = merge_with_synthetic("mpi_merged", 0, f);
  EXPECT_EQ(m.report.violations, 0u)
      << (m.report.violation_details.empty() ? "" : m.report.violation_details.front());
  // Per rank: open, write, close, open, read, close.
  EXPECT_EQ(m.report.checked_calls, 2u * 6u);
  EXPECT_EQ(m.report.unsupported_events, 0u);  // MPI events are carried
  EXPECT_EQ(m.report.processes, 2u);
  const auto& d = m.archive.defs;
  EXPECT_EQ(d.duplicate_definitions, 0u);
  expect_dense_ids(d.groups, "group");
  expect_dense_ids(d.comms, "comm");
  // The ranks, in order, as the kernel's thread locations (TID = PID of each rank).
  ASSERT_FALSE(d.groups.empty());
  EXPECT_EQ(d.groups[0].type, OTF2_GROUP_TYPE_COMM_LOCATIONS);
  std::vector<uint64_t> ranks = {f.pid_of_rank.at(0), f.pid_of_rank.at(1)};
  EXPECT_EQ(d.groups[0].members, ranks);
  const converters::CommDef* world = comm_named(d, "MPI_COMM_WORLD");
  ASSERT_NE(world, nullptr);
  EXPECT_EQ(d.groups.at(world->group_index).members, (std::vector<uint64_t>{0, 1}));

  // python3-otf2 reads the MPI events with their communicator and resolves the peers.
  auto py =
      run({"/usr/bin/python3", EZIO_TEST_SUPPORT_DIR "/otf2_dump.py", "--mpi", m.anchor.string()});
  ASSERT_EQ(py.status, 0) << py.err;
  auto j = nlohmann::json::parse(py.out);
  EXPECT_TRUE(j["warnings"].empty()) << j["warnings"];
  std::map<std::string, int> kinds;
  for (const auto& e : j["events"]) {
    std::string k = e["k"];
    ++kinds[k];
    if (e.contains("comm")) {
      EXPECT_EQ(e["comm"], "MPI_COMM_WORLD");
      EXPECT_EQ(e["members"], nlohmann::json(ranks));
    }
    if (k == "MpiSend") {
      EXPECT_EQ(e["loc"], ranks[0]);
      EXPECT_EQ(e["peer"], ranks[1]);
    }
    if (k == "MpiRecv") {
      EXPECT_EQ(e["loc"], ranks[1]);
      EXPECT_EQ(e["peer"], ranks[0]);
    }
  }
  EXPECT_EQ(
      kinds,
      (std::map<std::string, int>{
          {"MpiCollectiveBegin", 2}, {"MpiCollectiveEnd", 2}, {"MpiRecv", 1}, {"MpiSend", 1}}));
  ezio::test::Run p = run({"otf2-print", "-A", m.anchor.string()});
  EXPECT_EQ(p.status, 0);
  EXPECT_EQ(p.err, "");
}

TEST(MergeMpi, UserEventsEqualEztraceOneForOne) {
  const auto& f = mpi_traced_run();
  ASSERT_EQ(f.inputs.size(), 2u);
  auto m = merge_with_synthetic("mpi_one_for_one", 0, f);
  for (const auto& in : f.inputs) {
    const auto& t = in.process.threads.at(0);
    Sequence want, got;
    const converters::Archive original = converters::read_archive(in.archive->anchor);
    for (const auto& e : original.events.at(t.location)) {
      want.emplace_back(converters::event_kind_name(e.kind), describe(in.archive->defs, e));
    }
    auto mev = m.archive.events.find(t.tid);
    ASSERT_NE(mev, m.archive.events.end()) << "tid " << t.tid;
    for (const auto& e : mev->second) {
      if (converters::is_user_event(m.archive.defs, e)) {
        got.emplace_back(converters::event_kind_name(e.kind), describe(m.archive.defs, e));
      }
    }
    EXPECT_EQ(got, want) << "rank of pid " << in.process.pid;
  }
}

}  // namespace
}  // namespace ezio::test
