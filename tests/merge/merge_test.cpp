// The merge on a real EZTrace run of merge_app (3 threads, an exec'd child) and a kernel archive
// synthesized from it (synthetic_kernel.cpp): alignment, filtering, one-for-one user events, and
// the readers' verdicts (otf2-print, python3-otf2, ViTE).
#include "converters/merge.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "converters/eztrace_run.h"
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

// Runs merge_app under EZTrace + the helper once for all tests.
const Fixture& traced_run() {
  static Fixture f = [] {
    Fixture x;
    x.dir = scratch_dir("merge_run");
    setenv("EZIOTRACE_PRELOAD_HELPER", EZIO_PRELOAD_HELPER, 1);
    x.setup = converters::prepare_eztrace({"posixio"}, x.dir / "work");
    ezio::test::Run r =
        run({program("merge_app"), x.dir.string(), program("merge_child")}, x.setup.env);
    EXPECT_EQ(r.status, 0) << r.err;
    x.app_out = r.out;
    std::vector<std::string> warnings;
    x.inputs = converters::load_eztrace_inputs(x.setup.sidecar_dir, {}, warnings);
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
  ASSERT_EQ(f.inputs.size(), 2u);  // merge_app and the exec'd merge_child
  EXPECT_EQ(f.inputs[0].process.program, "merge_app");
  EXPECT_EQ(f.inputs[1].process.program, "merge_child");
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

Merged merge_with_synthetic(const std::string& name, int64_t shift_ns) {
  const auto& f = traced_run();
  auto dir = scratch_dir(name);
  auto kernel_inputs = f.inputs;
  Merged m;
  m.counts = write_synthetic_kernel(kernel_inputs, dir / "kernel");
  auto inputs = f.inputs;
  for (auto& in : inputs) in.process.first_timestamp += shift_ns;
  m.report =
      converters::merge_archives(inputs, converters::read_archive(dir / "kernel/eziotrace.otf2"),
                                 dir / "merged", {f.setup.sidecar_dir, f.setup.trace_dir});
  m.anchor = dir / "merged/eziotrace.otf2";
  m.archive = converters::read_archive(m.anchor);
  return m;
}

TEST(Merge, AlignedInputHasNoViolationAndEveryCallChecked) {
  auto m = merge_with_synthetic("aligned", 0);
  EXPECT_EQ(m.report.violations, 0u)
      << (m.report.violation_details.empty() ? "" : m.report.violation_details.front());
  // open, write, pwrite, lseek, read, close (posix) + 2 fopen, 2 fclose (stdio) + child 2 open,
  // 3 write, read, 2 close.
  EXPECT_EQ(m.report.checked_calls, 6u + 4u + 8u);
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

TEST(Merge, UserEventsEqualEztraceOneForOne) {
  const auto& f = traced_run();
  auto m = merge_with_synthetic("one_for_one", 0);
  const auto& md = m.archive.defs;
  size_t total = 0;
  for (const auto& in : f.inputs) {
    for (const auto& t : in.process.threads) {
      Sequence want, got;
      auto ev = in.archive.events.find(t.location);
      if (ev != in.archive.events.end()) {
        for (const auto& e : ev->second) {
          want.emplace_back(converters::event_kind_name(e.kind), describe(in.archive.defs, e));
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
