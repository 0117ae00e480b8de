// SPDX-License-Identifier: GPL-2.0-only
// A process whose EZTrace archive cannot be read (EZTrace wrote it corrupt, or it was cut short)
// is merged as a process without user trace, named with the reason, while the other processes
// merge as usual; with no readable archive left, the result is the kernel archive saying why.
// Through finish_eztrace, the merge `eziotrace run` makes once the application has ended, on a
// real EZTrace run of io_threads with a kernel archive synthesized from its intact archives.
#include <gtest/gtest.h>

#include <algorithm>

#include "common/error.h"
#include "converters/eztrace/run_merge.h"
#include "merge_fixture.h"
#include "run.h"

namespace ezio::test {
namespace {

namespace fs = std::filesystem;

struct Recording {
  Fixture f;
  fs::path kernel;  // the synthesized kernel archive's anchor
};

// io_threads traced into a directory of its own (the tests break its archives), and the kernel
// archive of that run.
Recording record(const std::string& name) {
  Recording r{trace_io_threads(name), {}};
  write_synthetic_kernel(r.f.inputs, r.f.dir / "kernel");
  r.kernel = r.f.dir / "kernel/eziotrace.otf2";
  return r;
}

const converters::EztraceInput& input_of(const Fixture& f, const std::string& program) {
  auto it = std::find_if(f.inputs.begin(), f.inputs.end(),
                         [&](const auto& in) { return in.process.program == program; });
  if (it == f.inputs.end()) throw Error("no EZTrace input of " + program);
  return *it;
}

// Cuts a file to half its size, as a writer that stopped midway leaves it.
void cut_in_half(const fs::path& p) {
  ASSERT_TRUE(fs::exists(p)) << p;
  auto size = fs::file_size(p);
  ASSERT_GT(size, 1u) << p;
  fs::resize_file(p, size / 2);
}

// The archive's first event file: EZTrace writes <anchor without .otf2>/<location>.evt.
fs::path an_event_file(const fs::path& anchor) {
  fs::path dir = anchor.parent_path() / anchor.stem();
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ".evt" && fs::file_size(e.path()) > 1) return e.path();
  }
  ADD_FAILURE() << "no event file in " << dir;
  return dir / "0.evt";
}

uint64_t events_of(const converters::EztraceInput& in) {
  uint64_t n = 0;
  for (const auto& [loc, l] : in.archive->locations) n += l.events;
  return n;
}

// A string-valued property of the machine, "?" when there is none.
std::string node_text(const converters::Definitions& d, const std::string& name) {
  for (const auto& p : d.node_properties) {
    if (p.type == OTF2_TYPE_STRING && d.str(p.name) == name) return d.str(p.value.stringRef);
  }
  return "?";
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(UnreadableTrace, ABrokenProcessIsMergedWithoutUserLevelAndTheOthersAsUsual) {
  Recording r = record("merge-unreadable-one");
  const auto& child = input_of(r.f, "io_child");
  const auto& parent = input_of(r.f, "io_threads");
  fs::path def = child.archive->anchor;
  def.replace_extension(".def");
  cut_in_half(def);  // the global definitions: the failure EZTrace was seen to cause

  auto s = converters::finish_eztrace(r.f.setup, r.kernel, r.f.dir / "merged");
  const auto& rep = s.report;
  EXPECT_EQ(rep.processes, 1u);
  EXPECT_EQ(rep.user_events, events_of(parent));  // io_threads' events, all of them
  EXPECT_EQ(rep.violations, 0u) << (rep.violation_details.empty() ? ""
                                                                  : rep.violation_details.front());
  EXPECT_EQ(rep.unreadable_traces, 1u);
  const std::string child_name = fmt::format("io_child [{}]", child.process.pid);
  ASSERT_EQ(rep.untraced_pids, std::vector<uint32_t>{child.process.pid});
  EXPECT_TRUE(has(rep.untraced.at(0), "EZTrace's trace cannot be read")) << rep.untraced.at(0);
  EXPECT_TRUE(has(rep.untraced.at(0), def.stem().string())) << rep.untraced.at(0);
  EXPECT_TRUE(std::any_of(rep.warnings.begin(), rep.warnings.end(), [&](const std::string& w) {
    return has(w, child_name) && has(w, "cannot be read") && has(w, "global definitions");
  })) << fmt::format("{}", fmt::join(rep.warnings, "\n"));
  EXPECT_TRUE(rep.user_level.starts_with("partial: 1 process(es)")) << rep.user_level;
  EXPECT_TRUE(has(rep.user_level, child_name + ": ")) << rep.user_level;
  EXPECT_TRUE(has(rep.user_level, "global definitions")) << rep.user_level;

  auto merged = converters::read_archive(s.anchor);
  EXPECT_EQ(node_text(merged.defs, "EZIOTRACE::USER_LEVEL"), rep.user_level);
  EXPECT_EQ(merged.defs.node_property("EZIOTRACE::PROCESSES_WITHOUT_USER_TRACE"), 1u);
  EXPECT_EQ(node_text(merged.defs, "EZIOTRACE::PIDS_WITHOUT_USER_TRACE"),
            std::to_string(child.process.pid));
  EXPECT_EQ(merged.defs.node_property("EZIOTRACE::EZTRACE_PROCESSES"), 1u);
  auto p = run({"otf2-print", "-A", s.anchor.string()});
  EXPECT_EQ(p.status, 0);
  EXPECT_EQ(p.err, "");
}

TEST(UnreadableTrace, NoReadableTraceLeavesTheKernelArchiveSayingWhy) {
  Recording r = record("merge-unreadable-all");
  for (const auto& in : r.f.inputs) cut_in_half(an_event_file(in.archive->anchor));

  // What the run's merge reads first: every process is unreadable, none is thrown for.
  std::vector<std::string> warnings;
  auto loaded = converters::load_eztrace_inputs(r.f.setup.sidecar_dir, warnings,
                                                scratch_dir("merge-unreadable-temp"));
  EXPECT_TRUE(loaded.traces.empty());
  ASSERT_EQ(loaded.unreadable.size(), 2u);
  for (const auto& u : loaded.unreadable) {
    EXPECT_TRUE(has(u.reason, "events of location")) << u.reason;
    EXPECT_TRUE(has(u.reason, u.anchor.string())) << u.reason;
  }
  EXPECT_EQ(warnings.size(), 2u);

  auto s = converters::finish_eztrace(r.f.setup, r.kernel, r.f.dir / "merged");
  const auto& rep = s.report;
  EXPECT_EQ(rep.processes, 0u);
  EXPECT_EQ(rep.user_events, 0u);
  EXPECT_GT(rep.kernel_events, 0u);
  EXPECT_EQ(rep.untraced_pids.size(), 2u);
  EXPECT_TRUE(rep.user_level.starts_with("missing: EZTrace's trace cannot be read"))
      << rep.user_level;
  for (const auto& in : r.f.inputs) {
    EXPECT_TRUE(has(rep.user_level, fmt::format("{} [{}]", in.process.program, in.process.pid)))
        << rep.user_level;
  }
  auto merged = converters::read_archive(s.anchor);
  EXPECT_EQ(node_text(merged.defs, "EZIOTRACE::USER_LEVEL"), rep.user_level);
  EXPECT_EQ(merged.defs.node_property("EZIOTRACE::PROCESSES_WITHOUT_USER_TRACE"), 2u);
  EXPECT_FALSE(merged.events.empty());
}

}  // namespace
}  // namespace ezio::test
