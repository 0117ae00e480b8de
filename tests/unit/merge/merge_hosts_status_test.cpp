// SPDX-License-Identifier: GPL-2.0-only
// `eziotrace merge-hosts` of parts whose recording is not whole: a host whose eziotraced went away
// mid-job is merged but named in EZIOTRACE::HOSTS_STATUS with why, the archive is partial (exit
// 4); a job interrupted by a signal says so in the archive's EZIOTRACE::STATUS
// (docs/cluster.md, "A host lost mid-job" and "Ctrl-C").
#include <gtest/gtest.h>

#include <fstream>

#include "common/otf2/reader.h"
#include "converters/hosts/merge_hosts.h"
#include "run.h"
#include "synthetic.h"

namespace ezio {
namespace {

namespace fs = std::filesystem;

constexpr char kGone[] =
    "eziotraced closed the connection (it stopped or died): nothing recorded after that, loss "
    "counters unknown";

// Host testhost (the reference, no clock file) and nodeB, of the given status.
struct Parts {
  fs::path root = test::scratch_dir("merge_hosts_status");
  fs::path a = root / "a", b = root / "b";
  Parts(const std::string& status, const std::string& reason) {
    fs::create_directories(a);
    fs::create_directories(b);
    test::write_basic_archive(a);
    test::write_basic_archive(b, status, reason);
    std::ofstream(b / "eziotrace-clock.json")
        << R"({"reference":"testhost","host":"nodeB","start":{"offset_ns":1000,"error_ns":100,)"
           R"("at_ns":0,"rounds":10},"end":null,"end_missing":"gone"})";
  }
};

std::string text(const otf2::Definitions& d, const std::string& node, const std::string& name) {
  for (const auto& p : d.node_properties) {
    if (d.str(d.nodes.at(p.owner).name) == node && d.str(p.name) == name)
      return p.type == OTF2_TYPE_STRING ? d.str(p.value.stringRef) : std::to_string(p.value.uint64);
  }
  return "(none)";
}

TEST(MergeHostsStatus, AHostWhoseServiceWentAwayIsMergedButNamedAsIncomplete) {
  Parts parts("interrupted", kGone);
  const fs::path out = parts.root / "out";
  test::Run r = test::eziotrace({"merge-hosts", parts.a.string(), parts.b.string(), "-o", out});
  EXPECT_EQ(r.status, 4) << r.err;
  const std::string anchor = (out / "eziotrace.otf2").string();
  otf2::Archive merged = otf2::read_archive(anchor);
  const otf2::Definitions& d = merged.defs;
  const std::string status = text(d, "cluster", "EZIOTRACE::HOSTS_STATUS");
  EXPECT_EQ(status, "partial: nodeB (" + parts.b.string() + "): merged, its recording " +
                        "interrupted (" + kGone + ")");
  EXPECT_EQ(text(d, "cluster", "EZIOTRACE::HOSTS"), "2");
  EXPECT_EQ(text(d, "cluster", "EZIOTRACE::HOSTS_MISSING"), "0");
  EXPECT_EQ(text(d, "cluster", "EZIOTRACE::STATUS"), "nodeB: interrupted");
  EXPECT_EQ(text(d, "nodeB", "EZIOTRACE::STATUS_REASON"), kGone);
  EXPECT_EQ(text(d, "testhost", "EZIOTRACE::STATUS"), "complete");
  for (const char* analyzer : {"profile", "layers", "files", "latency", "collective", "advise"}) {
    test::Run a = test::eziotrace({analyzer, anchor});
    EXPECT_EQ(a.status, 0) << analyzer << ": " << a.err;
  }
}

TEST(MergeHostsStatus, AnApplicationThatCrashedLeavesTheRecordingWhole) {
  Parts parts("application-crashed", "");
  auto report = converters::merge_hosts({parts.a, parts.b}, parts.root / "crashed");
  EXPECT_EQ(report.status, "complete");
  EXPECT_FALSE(report.partial());
}

TEST(MergeHostsStatus, AJobInterruptedBySignalSaysSoOnTheRoot) {
  Parts parts("interrupted", "SIGTERM received");
  const fs::path out = parts.root / "signalled";
  auto report =
      converters::merge_hosts({parts.a, parts.b}, out, {}, "SIGINT to eziotrace during the step");
  EXPECT_TRUE(report.partial());
  otf2::Archive merged = otf2::read_archive(out / "eziotrace.otf2");
  EXPECT_EQ(text(merged.defs, "cluster", "EZIOTRACE::STATUS"), "interrupted");
  EXPECT_EQ(text(merged.defs, "cluster", "EZIOTRACE::STATUS_REASON"),
            "SIGINT to eziotrace during the step");
  EXPECT_NE(report.status.find("merged, its recording interrupted (SIGTERM received)"),
            std::string::npos)
      << report.status;
}

}  // namespace
}  // namespace ezio
