// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/service/flight_rules.h"

#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <regex>

#include "common/error.h"
#include "common/log.h"
#include "recorder/service/peer.h"

namespace fs = std::filesystem;

namespace ezio::recorder::service {
namespace {

// The upper bound of the log2 bucket holding the 99th percentile of the calls counted between
// two cumulative histograms (metrics.h: bucket i ends at 2^(i + SHIFT) ns); -1 without calls.
double p99_seconds(const std::array<uint64_t, EZIO_M_HIST>& now,
                   const std::array<uint64_t, EZIO_M_HIST>& then) {
  uint64_t total = 0;
  for (unsigned i = 0; i < EZIO_M_HIST; ++i) total += now[i] - then[i];
  if (total == 0) return -1;
  uint64_t seen = 0;
  for (unsigned i = 0; i < EZIO_M_HIST; ++i) {
    seen += now[i] - then[i];
    if (double(seen) >= 0.99 * double(total)) return double(1ull << (i + EZIO_M_HIST_SHIFT)) / 1e9;
  }
  return double(1ull << (EZIO_M_HIST - 1 + EZIO_M_HIST_SHIFT)) / 1e9;
}

// The rule's figure between two samples `span_ns` apart; whether it is over the threshold.
bool holds(const FlightRule& r, const JobFigures& now, const JobFigures& then, uint64_t span_ns) {
  switch (r.metric) {
    case FlightRule::Metric::kWriteP99: {
      double p = p99_seconds(now.write_hist, then.write_hist);
      return p >= 0 && p > r.threshold;
    }
    case FlightRule::Metric::kReadP99: {
      double p = p99_seconds(now.read_hist, then.read_hist);
      return p >= 0 && p > r.threshold;
    }
    case FlightRule::Metric::kThrottled:
      return double(now.throttled_ns - then.throttled_ns) / double(span_ns) > r.threshold;
  }
  return false;
}

std::string stamp() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

}  // namespace

FlightRule parse_flight_rule(const std::string& text) {
  static const std::regex form(
      R"(^\s*(write_p99|read_p99|throttled)\s*>\s*([0-9.eE+-]+)\s*:\s*([0-9.]+)\s*$)");
  std::smatch m;
  if (!std::regex_match(text, m, form)) {
    fail(
        "flight rule '{}' is not METRIC>THRESHOLD:SECONDS (METRIC write_p99, read_p99 in "
        "seconds, or throttled, a share 0..1; e.g. write_p99>0.005:10)",
        text);
  }
  FlightRule r;
  r.text = text;
  r.metric = m[1] == "write_p99"  ? FlightRule::Metric::kWriteP99
             : m[1] == "read_p99" ? FlightRule::Metric::kReadP99
                                  : FlightRule::Metric::kThrottled;
  try {
    r.threshold = std::stod(m[2]);
    r.seconds = std::stod(m[3]);
  } catch (const std::exception&) {
    fail("flight rule '{}': {} or {} is not a number", text, m[2].str(), m[3].str());
  }
  if (r.threshold < 0 || r.seconds < 1 || r.seconds > 86400) {
    fail("flight rule '{}': the threshold must be >= 0, the seconds within 1..86400", text);
  }
  return r;
}

const FlightRule* JobRules::evaluate(const RulesConfig& config, const JobFigures& now,
                                     uint64_t now_ns) {
  ++evaluations_;
  double longest = 0;
  for (const FlightRule& r : config.rules) longest = std::max(longest, r.seconds);
  // Kept: what the longest window needs, and the newest sample before it.
  while (samples_.size() > 1 && samples_[1].first + uint64_t(longest * 1e9) <= now_ns) {
    samples_.pop_front();
  }
  const FlightRule* found = nullptr;
  bool quiet = !last_fired_ns_ || now_ns - last_fired_ns_ >= uint64_t(config.min_interval * 1e9);
  for (const FlightRule& r : config.rules) {
    if (found || !quiet || client_) break;
    uint64_t span = uint64_t(r.seconds * 1e9);
    // The newest sample at least the window old: the figure is over the window, no less.
    const std::pair<uint64_t, JobFigures>* then = nullptr;
    for (const auto& s : samples_) {
      if (s.first + span <= now_ns) then = &s;
    }
    if (then && holds(r, now, then->second, now_ns - then->first)) found = &r;
  }
  samples_.emplace_back(now_ns, now);
  return found;
}

bool JobRules::fire(const RulesConfig& config, const FlightRule& rule, const std::string& job,
                    uid_t owner, uint64_t now_ns) {
  last_fired_ns_ = now_ns;  // a failure is not retried at once either
  last_rule_ = rule.text;
  struct stat st {};
  if (stat(config.dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != owner) {
    ++failed_;
    spdlog::error(
        "flight rule '{}' holds for job {}, but {} is not a directory of the job's owner ({}): "
        "no snapshot",
        rule.text, job, config.dir.string(), user_name(owner));
    return false;
  }
  passwd* pw = getpwuid(owner);
  gid_t gid = pw ? pw->pw_gid : gid_t(owner);
  // The owner's groups, as at a login: the client must be allowed to use the service.
  std::vector<gid_t> groups(64);
  int count = int(groups.size());
  if (pw && getgrouplist(pw->pw_name, gid, groups.data(), &count) < 0) {
    groups.resize(size_t(count));
    if (getgrouplist(pw->pw_name, gid, groups.data(), &count) < 0) count = 0;
  }
  groups.resize(pw ? size_t(count) : 0);
  std::string base = fs::path(job).filename().string();
  last_archive_ =
      (config.dir / fmt::format("{}-{}", base.empty() ? "root" : base, stamp())).string();
  std::vector<std::string> argv = {config.eziotrace.string(),
                                   "snapshot",
                                   "--job",
                                   job,
                                   "-o",
                                   last_archive_,
                                   "--socket",
                                   config.socket};
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0) {
    ++failed_;
    spdlog::error("flight rule '{}': fork: {}", rule.text, errno_text(errno));
    return false;
  }
  if (pid == 0) {  // only async-signal-safe calls until the exec: other threads may hold locks
    if (setgroups(groups.size(), groups.data()) != 0 || setgid(gid) != 0 || setuid(owner) != 0)
      _exit(126);
    execv(args[0], args.data());
    _exit(127);
  }
  client_ = pid;
  client_rule_ = rule.text;
  ++fired_;
  spdlog::info("flight rule '{}' holds for job {}: its snapshot goes to {} (pid {})", rule.text,
               job, last_archive_, pid);
  return true;
}

const std::string* JobRules::rule_of(pid_t pid) const {
  return client_ && pid == client_ ? &client_rule_ : nullptr;
}

void JobRules::reap() {
  if (!client_) return;
  int status = 0;
  pid_t r = waitpid(client_, &status, WNOHANG);
  if (r == 0) return;
  if (r == client_ && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
    ++failed_;
    spdlog::error("flight rule '{}': the snapshot to {} failed (wait status {})", client_rule_,
                  last_archive_, status);
  }
  client_ = 0;
}

nlohmann::json JobRules::status() const {
  return {{"evaluations", evaluations_},
          {"fired", fired_},
          {"failed", failed_},
          {"last_rule", last_rule_},
          {"last_archive", last_archive_},
          {"writing", client_ != 0}};
}

}  // namespace ezio::recorder::service
