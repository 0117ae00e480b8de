// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The flight recorder's automatic snapshots (docs/flight-recorder.md): rules on a job's metrics
// (its p99 write or read latency, its share of time throttled by the dirty-page limits, over the
// last seconds) that, when one holds, write the job's snapshot as its owner into a directory of
// the owner's, at most once per interval and job.
#include <sys/types.h>

#include <array>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "metrics.h"

namespace ezio::recorder::service {

struct FlightRule {
  enum class Metric { kWriteP99, kReadP99, kThrottled };
  std::string text;  // as configured, e.g. "write_p99>0.005:10": what the archive says fired
  Metric metric = Metric::kWriteP99;
  double threshold = 0;  // seconds (p99), or a share of the time (throttled)
  double seconds = 10;   // the window the figure is taken over
};

// METRIC>THRESHOLD:SECONDS, METRIC one of write_p99, read_p99 (seconds), throttled (0..1); fails
// (ezio::Error) saying what is wrong.
FlightRule parse_flight_rule(const std::string& text);

// What the rules read of a job: its counters since eziotraced started (the metrics' table).
struct JobFigures {
  std::array<uint64_t, EZIO_M_HIST> write_hist{}, read_hist{};
  uint64_t throttled_ns = 0;
};
using FiguresSource = std::function<JobFigures(uint64_t cgroup_id)>;

struct RulesConfig {
  std::vector<FlightRule> rules;
  std::filesystem::path dir;        // where the snapshots go: must be the job owner's
  double min_interval = 600;        // seconds between two automatic snapshots of a job
  std::filesystem::path eziotrace;  // the client that writes the archive, run as the owner
  std::string socket;               // the service's, which that client asks
  FiguresSource figures;
};

// One job's watch: a sample of its figures per evaluation, the snapshots it fired.
class JobRules {
 public:
  // The rule that holds now, if one does and the job's last snapshot is old enough; the sample is
  // kept for the next evaluations.
  const FlightRule* evaluate(const RulesConfig& config, const JobFigures& now, uint64_t now_ns);
  // Writes the snapshot: `eziotrace snapshot` run as owner (its pid is the one whose SNAPSHOT says
  // the rule). false (logged) when the directory is not the owner's or the client cannot start.
  bool fire(const RulesConfig& config, const FlightRule& rule, const std::string& job, uid_t owner,
            uint64_t now_ns);
  // The rule that the snapshot asked by pid answers, if pid is the client fire() started.
  const std::string* rule_of(pid_t pid) const;
  // Reaps the client when it has ended.
  void reap();
  nlohmann::json status() const;

 private:
  std::deque<std::pair<uint64_t, JobFigures>> samples_;
  uint64_t last_fired_ns_ = 0;
  uint64_t evaluations_ = 0, fired_ = 0, failed_ = 0;
  pid_t client_ = 0;
  std::string client_rule_, last_rule_, last_archive_;
};

}  // namespace ezio::recorder::service
