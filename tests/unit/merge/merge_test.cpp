// SPDX-License-Identifier: GPL-2.0-only
// The merge on a real EZTrace run of io_threads (3 threads, an exec'd child) with a kernel
// archive synthesized from it (synthetic_kernel.cpp): alignment, the self-check, one-for-one user
// events, the user handle -> kernel file tie, and the readers' verdicts (otf2-print, python3-otf2,
// ViTE).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "common/error.h"
#include "io_threads.h"
#include "merge_fixture.h"
#include "run.h"

namespace ezio::test {
namespace {
using converters::EventKind;

std::string file_bytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Two merged archives hold the same files, byte for byte, but their anchors (which hold their
// creation time).
void expect_same_files(const std::filesystem::path& a, const std::filesystem::path& b) {
  size_t compared = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(a)) {
    if (!entry.is_regular_file() || entry.path().extension() == ".otf2") continue;
    auto other = b / std::filesystem::relative(entry.path(), a);
    ASSERT_TRUE(std::filesystem::exists(other)) << other;
    EXPECT_TRUE(file_bytes(entry.path()) == file_bytes(other)) << other << " differs";
    ++compared;
  }
  EXPECT_GT(compared, 2u);
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

// The merged mode takes the kernel events from the copy the recorder made while writing its
// archive (otf2::EventTap) instead of decoding the archive: the merged archive is the same, file
// for file.
TEST(Merge, KernelEventsFromTheWritersCopyMergeIntoTheSameArchive) {
  const Fixture& f = traced_run();
  auto dir = scratch_dir("merge-tapped");
  auto copy = std::make_unique<converters::EventStore>(dir);
  write_synthetic_kernel(f.inputs, dir / "kernel", 0, copy.get());
  std::vector<std::filesystem::path> own = {f.setup.sidecar_dir, f.setup.trace_dir};
  auto load = [&f] { return converters::EztraceInputs{f.inputs, {}}; };
  auto decoded =
      converters::merge_archives(load, dir / "kernel/eziotrace.otf2", dir / "decoded", own, {});
  auto tapped = converters::merge_archives(load, dir / "kernel/eziotrace.otf2", dir / "tapped", own,
                                           {}, std::move(copy));
  EXPECT_EQ(decoded.kernel_events, tapped.kernel_events);
  EXPECT_EQ(decoded.user_events, tapped.user_events);
  EXPECT_GT(tapped.kernel_events, 0u);
  EXPECT_TRUE(tapped.kernel_events_recorded);  // the copy was used, the archive not decoded
  EXPECT_FALSE(decoded.kernel_events_recorded);
  expect_same_files(dir / "decoded", dir / "tapped");
}

// eziotrace run without --keep-parts: the recorder's copy is the only one (no event file in the
// kernel archive, its definitions declaring the events the copy holds); the merged archive is
// the same, file for file, as the one merged from a whole archive.
TEST(Merge, KernelEventsOnlyInTheWritersCopyMergeIntoTheSameArchive) {
  const Fixture& f = traced_run();
  auto dir = scratch_dir("merge-tap-only");
  auto copy = std::make_unique<converters::EventStore>(dir);
  write_synthetic_kernel(f.inputs, dir / "whole", 0);
  write_synthetic_kernel(f.inputs, dir / "defs", 0, copy.get(), false);
  size_t event_files = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir / "defs")) {
    event_files += e.path().extension() == ".evt";
  }
  EXPECT_EQ(event_files, 0u);
  std::vector<std::filesystem::path> own = {f.setup.sidecar_dir, f.setup.trace_dir};
  auto load = [&f] { return converters::EztraceInputs{f.inputs, {}}; };
  auto decoded =
      converters::merge_archives(load, dir / "whole/eziotrace.otf2", dir / "decoded", own, {});
  auto tapped = converters::merge_archives(load, dir / "defs/eziotrace.otf2", dir / "tapped", own,
                                           {}, std::move(copy));
  EXPECT_TRUE(tapped.kernel_events_recorded);
  EXPECT_EQ(decoded.kernel_events, tapped.kernel_events);
  EXPECT_GT(tapped.kernel_events, 0u);
  expect_same_files(dir / "decoded", dir / "tapped");
  // A copy that does not hold the archive's events cannot be replaced by them: a clear failure.
  auto empty = std::make_unique<converters::EventStore>(dir);
  try {
    converters::merge_archives(load, dir / "defs/eziotrace.otf2", dir / "refused", own, {},
                               std::move(empty));
    ADD_FAILURE() << "merged without the kernel events";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--keep-parts"), std::string::npos) << e.what();
  }
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
