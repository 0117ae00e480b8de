// SPDX-License-Identifier: GPL-2.0-only
// `eziotrace advise` and `eziotrace report` end to end: each rule's workload
// (tests/programs/advise_workload.c) recorded on a private ext4 loop device must trigger that rule,
// the well-behaved one none; the HTML report of the demo and of two workloads is rendered by
// headless Chromium (screenshot, DOM, console) and its funnel checked against `layers --json`.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "recorded_suite.h"
#include "synthetic.h"

namespace fs = std::filesystem;
using ezio::test::DirtyLimit;
using ezio::test::run;
using ezio::test::SysfsSetting;

using nlohmann::json;

namespace {

class ReportTest : public ezio::test::RecordedSuite {
 protected:
  // Records `advise_workload MODE DIR`.
  static fs::path record_mode(const std::string& mode, bool with_eztrace = false) {
    return record({EZIO_WORKLOAD, mode, data_dir(mode).string()}, mode, with_eztrace);
  }

  static json advise(const fs::path& trace) {
    ezio::test::Run r = ezio::test::eziotrace({"advise", "--json", trace.string()});
    EXPECT_EQ(r.status, 0) << r.err;
    return json::parse(r.out);
  }
};

std::map<std::string, std::string> rules_found(const json& advice) {
  std::map<std::string, std::string> out;  // rule -> level (the most severe first)
  for (auto& f : advice["findings"]) out.emplace(f["rule"], f["level"]);
  return out;
}

struct RuleCase {
  std::string mode, rule, level;
  bool eztrace = false;
};

void PrintTo(const RuleCase& c, std::ostream* os) { *os << c.mode << " -> " << c.rule; }

class RuleTest : public ReportTest, public ::testing::WithParamInterface<RuleCase> {};

TEST_P(RuleTest, WorkloadTriggersItsRule) {
  const RuleCase& c = GetParam();
  json advice = advise(record_mode(c.mode, c.eztrace));
  auto found = rules_found(advice);
  ASSERT_TRUE(found.contains(c.rule)) << c.mode << " did not trigger " << c.rule << ":\n"
                                      << advice["findings"].dump(2);
  EXPECT_EQ(found[c.rule], c.level) << advice["findings"].dump(2);
  for (auto& f : advice["findings"]) {
    EXPECT_FALSE(f["evidence"].get<std::string>().empty());
    EXPECT_FALSE(f["advice"].get<std::string>().empty());
  }
}

INSTANTIATE_TEST_SUITE_P(Advise, RuleTest,
                         ::testing::Values(RuleCase{"small", "small-requests", "info"},
                                           RuleCase{"small-direct", "small-requests", "high"},
                                           RuleCase{"random", "random-access", "warn"},
                                           RuleCase{"random", "cache-read-misses", "warn"},
                                           RuleCase{"misaligned", "read-modify-write", "high"},
                                           RuleCase{"fsync", "sync-cost", "high"},
                                           RuleCase{"metadata", "metadata-storm", "warn"},
                                           RuleCase{"reopen", "reopened-files", "warn"},
                                           RuleCase{"stdio", "useless-buffering", "warn", true},
                                           RuleCase{"threads", "thread-interference", "warn"}),
                         [](const auto& info) {
                           std::string n = info.param.mode + "_" + info.param.rule;
                           for (char& ch : n)
                             ch = std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
                           return n;
                         });

TEST_F(ReportTest, WellBehavedWorkloadTriggersNoRule) {
  json advice = advise(record_mode("good"));
  EXPECT_TRUE(advice["findings"].empty()) << advice["findings"].dump(2);
  // Dirty throttling is recorded (writeback:balance_dirty_pages): the rule looked, and none
  // happened.
  for (auto& u : advice["not_observed"]) EXPECT_NE(u["rule"], "dirty-throttling") << u.dump();
}

// The rules that need the device itself to behave: each workload runs on its own loop device
// with one setting changed for it (restored after).
using DeviceRuleTest = ReportTest;

TEST_F(DeviceRuleTest, DirtyPageLimitThrottlesTheWriter) {
  json advice;
  {
    // At most 4 MiB of dirty pages for this device: 96 MiB of buffered writes wait for its
    // write-back.
    DirtyLimit limit(bdi_dir(), 4 << 20);
    advice = advise(record_mode("throttle"));
  }
  auto found = rules_found(advice);
  ASSERT_EQ(found["dirty-throttling"], "warn") << advice["findings"].dump(2);
  for (auto& f : advice["findings"]) {
    if (f["rule"] != "dirty-throttling") continue;
    EXPECT_GT(f["numbers"]["pauses"].get<uint64_t>(), 0u);
    EXPECT_GT(f["numbers"]["throttled_s"].get<double>(), 0.0);
    EXPECT_GT(f["numbers"]["pause_max_s"].get<double>(), 0.0);
    ASSERT_FALSE(f["where"].empty());
    EXPECT_NE(f["where"][0].get<std::string>().find("advise_workload"), std::string::npos)
        << "the throttled thread is named: " << f["where"].dump();
  }
}

// The pauses in `profile` and `files` (text, JSON, CSV): profile gives the page cache's region
// its time but no SCI (it is not an I/O call), files puts each pause on the file it held up.
TEST_F(DeviceRuleTest, ThrottledTimeInProfileAndFiles) {
  fs::path trace;
  {
    DirtyLimit limit(bdi_dir(), 4 << 20);
    trace = record_mode("throttle");
  }
  ezio::test::Run r = ezio::test::eziotrace({"profile", "--total", "--json", trace.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  json profile = json::parse(r.out), pause;
  for (auto& row : profile["profile"]) {
    if (row["function"] == "balance_dirty_pages" && row["layer"] == "pagecache") pause = row;
  }
  ASSERT_FALSE(pause.is_null()) << r.out;
  EXPECT_GT(pause["inclusive_s"].get<double>(), 0.0);
  EXPECT_TRUE(pause["sci"].is_null()) << pause.dump();

  r = ezio::test::eziotrace({"files", "--json", trace.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  json files = json::parse(r.out);
  double on_files = 0;
  for (auto& row : files["files"]) {
    EXPECT_NE(row["layer"], "pagecache") << "a pause counted as a page-cache access: " << row;
    if (row["throttled_s"].is_null()) continue;
    EXPECT_EQ(row["layer"], "syscall") << row;
    on_files += row["throttled_s"].get<double>();
  }
  // Every pause of the workload happened in a write to its one data file.
  EXPECT_NEAR(on_files, pause["inclusive_s"].get<double>(), 1e-6);
  r = ezio::test::eziotrace({"files", "--csv", trace.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  // The files table's header: the first line that is not a table's "# name" line.
  std::istringstream csv(r.out);
  std::string header;
  while (std::getline(csv, header) && header.starts_with("#")) {
  }
  EXPECT_NE(header.find("throttled_s"), std::string::npos) << r.out;
  r = ezio::test::eziotrace({"files", trace.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("Throttled"), std::string::npos) << r.out;
}

TEST_F(DeviceRuleTest, ReadaheadBeyondTheBurstsIsWasted) {
  json advice;
  {
    SysfsSetting ra(bdi_dir() / "read_ahead_kb", "8192");
    advice = advise(record_mode("readahead"));
  }
  EXPECT_EQ(rules_found(advice)["readahead-waste"], "warn") << advice["findings"].dump(2);
}

TEST_F(DeviceRuleTest, QueueingSchedulerSaturatesTheDevice) {
  json advice;
  {
    // bfq with strict guarantees hands the device one request at a time: the 32 readers'
    // requests wait in the scheduler (loop devices otherwise take every request at once).
    SysfsSetting sched(block_dir() / "queue" / "scheduler", "bfq");
    SysfsSetting strict(block_dir() / "queue" / "iosched" / "strict_guarantees", "1");
    advice = advise(record_mode("saturate"));
  }
  ASSERT_EQ(rules_found(advice)["device-saturated"], "warn") << advice["findings"].dump(2);
  for (auto& f : advice["findings"]) {
    if (f["rule"] != "device-saturated") continue;
    EXPECT_GT(f["numbers"]["queue_over_service"].get<double>(), 1.0) << f.dump(2);
    EXPECT_GE(f["numbers"]["mean_depth"].get<double>(), 4.0) << f.dump(2);
  }
}

TEST_F(ReportTest, LostEventsMakeFindingsUncertain) {
  // An archive that says 5 syscall events were lost: a real recording loses events only when the
  // machine is busy enough, which a test cannot make sure of.
  fs::path trace = ezio::test::write_basic_archive(ezio::test::scratch_dir("report-lost"));
  json advice = advise(trace);
  ASSERT_EQ(advice["meta"]["lost_events"].value("syscall", 0), 5) << advice.dump(2);
  auto found = rules_found(advice);
  EXPECT_EQ(found["lost-events"], "high") << advice.dump(2);
  EXPECT_EQ(advice["findings"][0]["rule"], "lost-events") << "the most severe comes first";
}

TEST_F(ReportTest, InterruptedRecordingIsSaid) {
  fs::path out = ezio::test::scratch_dir("report-interrupted") / "trace";
  ezio::test::Run r = run({"timeout", "-s", "INT", "1.5", EZIO_BINARY, "record", "-f", "-o",
                           out.string(), "--", "sleep", "4"});
  json advice = advise(out / "eziotrace.otf2");
  EXPECT_EQ(advice["meta"]["status"], "interrupted") << r.err;
  EXPECT_EQ(rules_found(advice)["incomplete-recording"], "warn") << advice.dump(2);
}

TEST_F(ReportTest, ThresholdsAreOverridable) {
  fs::path trace = record_mode("reopen");
  fs::path cfg = ezio::test::scratch_dir("report-config") / "t.json";
  std::ofstream(cfg) << R"({"reopen_min_count": 1000})";
  ezio::test::Run r =
      ezio::test::eziotrace({"advise", "--json", "--config", cfg.string(), trace.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(rules_found(json::parse(r.out)).contains("reopened-files")) << r.out;
  std::ofstream(cfg) << R"({"no_such_threshold": 1})";
  r = ezio::test::eziotrace({"advise", "--config", cfg.string(), trace.string()});
  EXPECT_GT(r.status, 0);
  EXPECT_LT(r.status, 128);
  EXPECT_NE(r.err.find("no_such_threshold"), std::string::npos) << r.err;
}

}  // namespace
