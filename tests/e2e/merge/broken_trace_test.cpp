// SPDX-License-Identifier: GPL-2.0-only
// `eziotrace merge` of a recording whose EZTrace trace is broken (root, BPF, EZTrace): the
// archive was recorded whole, then one of its EZTrace archives cut short, as EZTrace was seen to
// leave one. The process of a trace that cannot be read is merged without its user level, named,
// with the reason; the other processes merge as usual; with no readable trace the result is the
// kernel archive. The merge succeeds (exit status 0, as for a run whose EZTrace wrote no trace)
// and says what the user level lacks. The run path's merge is tested in
// tests/unit/merge/unreadable_trace_test.cpp.
#include <gtest/gtest.h>

#include <regex>

#include "converters/merge/archive_model.h"
#include "converters/merge/merge.h"
#include "io_threads.h"
#include "run.h"

namespace fs = std::filesystem;
using ezio::test::program;
using ezio::test::run;

namespace {

using ezio::converters::Archive;

uint64_t number(const Archive& a, const std::string& name) {
  auto v = a.defs.node_property(name);
  EXPECT_TRUE(v) << "no property " << name;
  return v.value_or(UINT64_MAX);
}

std::string text(const Archive& a, const std::string& name) {
  for (const auto& p : a.defs.node_properties) {
    if (p.type == OTF2_TYPE_STRING && a.defs.str(p.name) == name)
      return a.defs.str(p.value.stringRef);
  }
  ADD_FAILURE() << "no property " << name;
  return "?";
}

struct Recorded {
  fs::path dir, ez, alignment, kernel;
};

// `eziotrace --keep-parts -- io_threads DIR io_child`: two processes (io_threads and the io_child
// it execs), each with its EZTrace trace in a directory of its own below dir/ez.
const Recorded& recorded() {
  static Recorded r = [] {
    Recorded x;
    x.dir = ezio::test::scratch_dir("merge-broken-recorded");
    fs::path out = x.dir / "run";
    auto rec = run({EZIO_BINARY, "--keep-parts", "-o", out.string(), "--", program("io_threads"),
                    x.dir.string(), program("io_child")});
    EXPECT_EQ(rec.status, IO_THREADS_EXIT_STATUS) << rec.err;
    fs::path parts = x.dir / "run.parts";
    x.ez = x.dir / "ez";
    fs::copy(parts / "eztrace/eztrace", x.ez, fs::copy_options::recursive);
    x.alignment = parts / "eztrace/eziotrace-alignment";
    x.kernel = parts / "kernel";
    return x;
  }();
  return r;
}

// The <prog>_trace directory of a program below dir.
fs::path trace_of(const fs::path& dir, const std::string& program) {
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_directory() && e.path().filename() == program + "_trace") return e.path();
  }
  ADD_FAILURE() << "no " << program << "_trace below " << dir;
  return dir / (program + "_trace");
}

// A copy of the recorded EZTrace directory in `name`.
fs::path copy_of(const std::string& name) {
  const Recorded& r = recorded();
  fs::path to = r.dir / name;
  fs::remove_all(to);
  fs::copy(r.ez, to, fs::copy_options::recursive);
  return to;
}

// Cuts a file to half its size, as a writer that stopped midway leaves it.
void cut_in_half(const fs::path& p) {
  ASSERT_TRUE(fs::exists(p)) << p;
  fs::resize_file(p, fs::file_size(p) / 2);
}

struct Merged {
  ezio::test::Run run;
  Archive archive;
};

Merged merge(const fs::path& eztrace, const std::string& name) {
  const Recorded& r = recorded();
  Merged m;
  fs::path out = r.dir / name;
  m.run = run({EZIO_BINARY, "merge", eztrace.string(), r.kernel.string(), "--alignment",
               r.alignment.string(), "-o", out.string()});
  if (fs::exists(out / "eziotrace.otf2")) {
    m.archive = ezio::converters::read_archive(out / "eziotrace.otf2");
  } else {
    ADD_FAILURE() << "no merged archive: " << m.run.err;
  }
  return m;
}

TEST(MergeBrokenTrace, OneBrokenTraceOfTwoLeavesItsProcessWithoutUserLevel) {
  Merged intact = merge(recorded().ez, "merged-intact");
  ASSERT_EQ(intact.run.status, 0) << intact.run.err;
  ASSERT_EQ(number(intact.archive, "EZIOTRACE::EZTRACE_PROCESSES"), 2u);
  const uint64_t untraced = number(intact.archive, "EZIOTRACE::PROCESSES_WITHOUT_USER_TRACE");
  fs::path ez = copy_of("ez-one-broken");
  cut_in_half(trace_of(ez, "io_child") / "eztrace_log.def");
  Merged m = merge(ez, "merged-one-broken");
  EXPECT_EQ(m.run.status, 0) << m.run.err;
  EXPECT_EQ(number(m.archive, "EZIOTRACE::EZTRACE_PROCESSES"), 1u);
  EXPECT_EQ(number(m.archive, "EZIOTRACE::ALIGNMENT_VIOLATIONS"), 0u);
  EXPECT_EQ(number(m.archive, "EZIOTRACE::PROCESSES_WITHOUT_USER_TRACE"), untraced + 1);
  std::string level = text(m.archive, "EZIOTRACE::USER_LEVEL");
  EXPECT_TRUE(level.starts_with("partial: ")) << level;
  EXPECT_NE(level.find("EZTrace's trace cannot be read: io_child ["), std::string::npos) << level;
  EXPECT_NE(level.find("io_child_trace/eztrace_log.otf2"), std::string::npos) << level;
  EXPECT_NE(level.find("global definitions"), std::string::npos) << level;
  std::string pids = text(m.archive, "EZIOTRACE::PIDS_WITHOUT_USER_TRACE");
  std::smatch pid;
  ASSERT_TRUE(std::regex_search(level, pid, std::regex(R"(io_child \[(\d+)\])"))) << level;
  EXPECT_NE((" " + pids + " ").find(" " + pid[1].str() + " "), std::string::npos) << pids;
  // Named in the log, with the reason, and the user level said at the end.
  EXPECT_NE(m.run.err.find("io_child [" + pid[1].str() + "]: EZTrace's trace cannot be read"),
            std::string::npos)
      << m.run.err;
  EXPECT_NE(m.run.err.find("user level: partial"), std::string::npos) << m.run.err;
  // io_threads' user events are there, all of them.
  size_t user_events = 0, original_events = 0;
  for (const auto& [loc, events] : m.archive.events) {
    for (const auto& e : events) user_events += ezio::converters::is_user_event(m.archive.defs, e);
  }
  auto original = ezio::converters::read_archive(trace_of(ez, "io_threads") / "eztrace_log.otf2");
  for (const auto& [loc, events] : original.events) original_events += events.size();
  EXPECT_GT(original_events, 0u);
  EXPECT_EQ(user_events, original_events);
}

TEST(MergeBrokenTrace, TheOnlyTraceBrokenLeavesTheKernelArchiveSayingWhy) {
  fs::path ez = copy_of("ez-only-broken");
  fs::path events = trace_of(ez, "io_child") / "eztrace_log";
  bool cut = false;
  for (const auto& e : fs::directory_iterator(events)) {
    if (e.path().extension() != ".evt" || fs::file_size(e.path()) < 2) continue;
    cut_in_half(e.path());
    cut = true;
  }
  ASSERT_TRUE(cut) << "no event file in " << events;
  Merged m = merge(trace_of(ez, "io_child"), "merged-only-broken");
  EXPECT_EQ(m.run.status, 0) << m.run.err;
  EXPECT_EQ(number(m.archive, "EZIOTRACE::EZTRACE_PROCESSES"), 0u);
  std::string level = text(m.archive, "EZIOTRACE::USER_LEVEL");
  EXPECT_TRUE(level.starts_with("missing: EZTrace's trace cannot be read")) << level;
  EXPECT_NE(level.find("events of location"), std::string::npos) << level;
  EXPECT_NE(m.run.err.find("EZTrace's trace cannot be read: the archive holds the kernel layers"),
            std::string::npos)
      << m.run.err;
  EXPECT_GE(number(m.archive, "EZIOTRACE::PROCESSES_WITHOUT_USER_TRACE"), 1u);
  EXPECT_FALSE(m.archive.events.empty());
}

}  // namespace
