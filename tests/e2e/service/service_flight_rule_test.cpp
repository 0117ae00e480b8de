// SPDX-License-Identifier: GPL-2.0-only
// eziotraced's automatic snapshots (docs/flight-recorder.md, --flight-rule): a rule that holds for
// a job's writes (p99 write latency over 0 s) writes one snapshot, as the job's owner, in the
// owner's directory, saying which rule took it; then the rate limit keeps it from firing again. A
// rule that cannot hold (over 1000 s) writes nothing over as many evaluations. No timing is
// asserted: the tests wait for the service's own count of evaluations.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "job_cgroup.h"
#include "service_env.h"

namespace fs = std::filesystem;
using ezio::test::JobCgroup;
using ezio::test::kUserA;
using nlohmann::json;

namespace {

class FlightRule : public ezio::test::WithTestUsers {};

// The job's rule state in the service's STATUS.
json rules_of(const ezio::test::ServiceDaemon& d) {
  json flight = d.status().value("flight", json::array());
  return flight.empty() ? json::object() : flight[0].value("rules", json::object());
}

// Waits until pred(rules) holds (the service evaluates once a second); fails the test after 60 s.
template <typename Pred>
json wait_rules(const ezio::test::ServiceDaemon& d, Pred pred) {
  json r;
  for (int i = 0; i < 600; ++i) {
    r = rules_of(d);
    if (pred(r)) return r;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ADD_FAILURE() << "the rule's state never got there: " << r.dump();
  return r;
}

uint64_t evaluations(const json& r) { return r.value("evaluations", uint64_t{0}); }

std::vector<std::string> dd(const fs::path& file) {
  return {"/bin/dd", "if=/dev/zero", "of=" + file.string(), "bs=4096", "count=100", "status=none"};
}

std::vector<fs::path> archives_in(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path());
  return out;
}

TEST_F(FlightRule, ARuleThatHoldsWritesOneSnapshotAsTheOwnerThenWaits) {
  JobCgroup job("ezio-flight-rule", users_->uid(kUserA));
  fs::path dir = ezio::test::user_dir(kUserA, "flight-rule");
  fs::path work = ezio::test::user_dir(kUserA, "flight-rule-work");
  const std::string rule = "write_p99>0:1";
  ezio::test::ServiceDaemon daemon(
      "flight-rule", {"--flight", job.path(), "--flight-rule", rule, "--flight-rule-dir",
                      dir.string(), "--flight-rule-interval", "3600"});
  // Two evaluations before the writes: the rule's window (1 s) has a sample before them.
  wait_rules(daemon, [](const json& r) { return evaluations(r) >= 2; });
  job.run_as(kUserA, dd(work / "slow.bin"));
  json r = wait_rules(
      daemon, [](const json& r) { return r.value("fired", 0) == 1 && !r.value("writing", true); });
  EXPECT_EQ(r.value("failed", -1), 0) << r.dump();
  EXPECT_EQ(r.value("last_rule", ""), rule);
  std::vector<fs::path> made = archives_in(dir);
  ASSERT_EQ(made.size(), 1u);
  EXPECT_EQ(made[0].string(), r.value("last_archive", ""));
  EXPECT_EQ(ezio::test::owner_of(made[0] / "eziotrace.otf2"), users_->uid(kUserA));
  json props = ezio::test::dump_archive(made[0] / "eziotrace.otf2")["properties"];
  EXPECT_EQ(props["EZIOTRACE::STATUS"], "snapshot");
  EXPECT_EQ(props["EZIOTRACE::SNAPSHOT_JOB"], job.path());
  EXPECT_EQ(props["EZIOTRACE::SNAPSHOT_RULE"], rule);
  EXPECT_GT(props.value("EZIOTRACE::SNAPSHOT_END_NS", uint64_t{0}),
            props.value("EZIOTRACE::SNAPSHOT_START_NS", uint64_t{0}));
  ezio::test::Run files = ezio::test::run({EZIO_BINARY, "files", made[0].string()});
  EXPECT_EQ(files.status, 0) << files.err;
  EXPECT_NE(files.out.find("slow.bin"), std::string::npos) << files.out;

  // It still holds for new writes, but the job had its snapshot within the interval: no other.
  uint64_t before = evaluations(r);
  job.run_as(kUserA, dd(work / "again.bin"));
  r = wait_rules(daemon, [&](const json& r) { return evaluations(r) >= before + 3; });
  EXPECT_EQ(r.value("fired", 0), 1);
  EXPECT_EQ(archives_in(dir).size(), 1u);
  // A snapshot asked by the owner is not said to be a rule's.
  ezio::test::Run asked =
      ezio::test::as_user(kUserA,
                          {EZIO_BINARY, "snapshot", "--socket", daemon.socket(), "--job",
                           job.path(), "-o", (work / "asked").string()},
                          work);
  ASSERT_EQ(asked.status, 0) << asked.err;
  json asked_props = ezio::test::dump_archive(work / "asked" / "eziotrace.otf2")["properties"];
  EXPECT_FALSE(asked_props.contains("EZIOTRACE::SNAPSHOT_RULE")) << asked_props.dump();
}

TEST_F(FlightRule, ARuleThatDoesNotHoldWritesNothing) {
  JobCgroup job("ezio-flight-norule", users_->uid(kUserA));
  fs::path dir = ezio::test::user_dir(kUserA, "flight-norule");
  fs::path work = ezio::test::user_dir(kUserA, "flight-norule-work");
  ezio::test::ServiceDaemon daemon(
      "flight-norule", {"--flight", job.path(), "--flight-rule", "write_p99>1000:1",
                        "--flight-rule-dir", dir.string(), "--flight-rule-interval", "1"});
  wait_rules(daemon, [](const json& r) { return evaluations(r) >= 2; });
  job.run_as(kUserA, dd(work / "fast.bin"));
  uint64_t after = evaluations(rules_of(daemon));
  // Evaluations whose 1 s window covers the writes, and more.
  json r = wait_rules(daemon, [&](const json& r) { return evaluations(r) >= after + 3; });
  EXPECT_EQ(r.value("fired", -1), 0);
  EXPECT_EQ(r.value("failed", -1), 0);
  EXPECT_TRUE(archives_in(dir).empty());
}

TEST_F(FlightRule, ABadRuleIsRefusedClearly) {
  ezio::test::Run r = ezio::test::run({EZIO_DAEMON, "--foreground", "--flight", "/x",
                                       "--flight-rule", "latency>5", "--flight-rule-dir", "/tmp"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("METRIC>THRESHOLD:SECONDS"), std::string::npos) << r.err;
}

}  // namespace
