// SPDX-License-Identifier: GPL-2.0-only
// The flight recorder's rules and the metrics' VFS labels without the kernel: a rule's syntax, when
// it holds over its window (log2 p99, throttled share), the rate limit; the layers' option; the
// VFS series' fstype and mount labels in the exposition.
#include "recorder/service/flight_rules.h"

#include <gtest/gtest.h>

#include "common/error.h"
#include "recorder/metrics/exposition.h"
#include "recorder/metrics/metrics_programs.h"

namespace ezio::recorder::service {
namespace {

constexpr uint64_t kSecond = 1'000'000'000;

TEST(FlightRules, ParsesTheThreeMetricsAndRefusesTheRest) {
  FlightRule r = parse_flight_rule("write_p99>0.005:10");
  EXPECT_EQ(r.metric, FlightRule::Metric::kWriteP99);
  EXPECT_DOUBLE_EQ(r.threshold, 0.005);
  EXPECT_DOUBLE_EQ(r.seconds, 10);
  EXPECT_EQ(parse_flight_rule("read_p99 > 1 : 2").metric, FlightRule::Metric::kReadP99);
  EXPECT_EQ(parse_flight_rule("throttled>0.2:30").metric, FlightRule::Metric::kThrottled);
  for (const char* bad :
       {"latency>5", "write_p99>x:1", "write_p99>1", "write_p99>1:0", "write_p99>-1:5", ""}) {
    EXPECT_THROW(parse_flight_rule(bad), Error) << bad;
  }
}

TEST(FlightRules, HoldsWhenTheWindowsP99IsOverTheThreshold) {
  RulesConfig c;
  c.rules = {parse_flight_rule("write_p99>0.001:2")};
  c.min_interval = 60;
  JobRules rules;
  JobFigures f;
  EXPECT_EQ(rules.evaluate(c, f, 10 * kSecond), nullptr);  // no window yet
  EXPECT_EQ(rules.evaluate(c, f, 11 * kSecond), nullptr);
  // 100 fast writes (bucket 3: below 8 µs): p99 under 1 ms.
  f.write_hist[3] += 100;
  EXPECT_EQ(rules.evaluate(c, f, 12 * kSecond), nullptr);
  // Then 5 slow ones (bucket 12: up to 4.2 ms) of 105: over 1 %, p99 = 4.2 ms.
  f.write_hist[12] += 5;
  EXPECT_EQ(rules.evaluate(c, f, 13 * kSecond), &c.rules[0]);
  EXPECT_EQ(rules.status()["evaluations"], 4);
}

TEST(FlightRules, ThrottledShareAndNothingWithoutCalls) {
  RulesConfig c;
  c.rules = {parse_flight_rule("read_p99>0:1"), parse_flight_rule("throttled>0.5:1")};
  JobRules rules;
  JobFigures f;
  rules.evaluate(c, f, kSecond);
  f.throttled_ns += kSecond / 4;  // a quarter of the second: under the share
  EXPECT_EQ(rules.evaluate(c, f, 2 * kSecond), nullptr);
  f.throttled_ns += kSecond * 3 / 4;
  EXPECT_EQ(rules.evaluate(c, f, 3 * kSecond), &c.rules[1]);
}

TEST(FlightRules, AFiredRuleWaitsForTheInterval) {
  RulesConfig c;
  c.rules = {parse_flight_rule("write_p99>0:1")};
  c.min_interval = 3600;
  c.dir = "/nonexistent-dir-of-the-test";  // fire() fails (logged), and counts as a firing
  JobRules rules;
  JobFigures f;
  rules.evaluate(c, f, kSecond);
  f.write_hist[0] += 1;
  const FlightRule* r = rules.evaluate(c, f, 2 * kSecond);
  ASSERT_NE(r, nullptr);
  EXPECT_FALSE(rules.fire(c, *r, "/job", 0, 2 * kSecond));
  f.write_hist[0] += 1;
  EXPECT_EQ(rules.evaluate(c, f, 3 * kSecond), nullptr);
  EXPECT_EQ(rules.status()["failed"], 1);
  EXPECT_EQ(rules.rule_of(1), nullptr);
}

TEST(MetricsLayersOption, AllOrAList) {
  auto all = metrics::parse_metrics_layers("all");
  EXPECT_TRUE(all.syscall && all.vfs && all.fs && all.pagecache && all.block);
  auto some = metrics::parse_metrics_layers("syscall,vfs");
  EXPECT_TRUE(some.syscall && some.vfs);
  EXPECT_FALSE(some.fs || some.pagecache || some.block);
  EXPECT_THROW(metrics::parse_metrics_layers("syscall,disk"), Error);
  EXPECT_THROW(metrics::parse_metrics_layers(""), Error);
}

TEST(MetricsVfsExposition, CarriesTheFileSystemTypeAndMount) {
  metrics::Snapshot s;
  metrics::NamedSeries n;
  n.s.key.cgroup = 7;
  n.s.key.op = EZIO_M_VFS_FSYNC;
  n.s.value.count = 3;
  n.cgroup = "/a";
  n.device = "loop2";
  n.fstype = "xfs";
  n.mount = "/mnt/x";
  s.series.push_back(n);
  std::string text = metrics::expose(s, metrics::Format::kPrometheus);
  EXPECT_NE(text.find("eziotrace_vfs_calls_total{cgroup=\"/a\",device=\"loop2\",fstype=\"xfs\","
                      "mount=\"/mnt/x\",op=\"fsync\"} 3\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("eziotrace_vfs_bytes_total{"), std::string::npos) << "no bytes for fsync";
  EXPECT_NE(text.find("eziotrace_overflow_events_total{layer=\"vfs\",op=\"mount\"} 0\n"),
            std::string::npos);
}

}  // namespace
}  // namespace ezio::recorder::service
