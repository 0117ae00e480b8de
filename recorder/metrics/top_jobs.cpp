// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/metrics/top_jobs.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <sstream>

namespace ezio::recorder::metrics {
namespace {

using Labels = std::map<std::string, std::string>;

struct Sample {
  std::string name;
  Labels labels;
  double value = 0;
};

// One sample line: name{k="v",...} value; false for what is not one (comments, garbage).
bool parse_sample(const std::string& line, Sample& s) {
  if (line.empty() || line[0] == '#') return false;
  size_t i = line.find_first_of("{ ");
  if (i == std::string::npos) return false;
  s.name = line.substr(0, i);
  s.labels.clear();
  if (line[i] == '{') {
    ++i;
    while (i < line.size() && line[i] != '}') {
      size_t eq = line.find("=\"", i);
      if (eq == std::string::npos) return false;
      std::string key = line.substr(i, eq - i);
      std::string value;
      for (i = eq + 2; i < line.size() && line[i] != '"'; ++i) {
        if (line[i] == '\\' && i + 1 < line.size()) {
          ++i;
          value += line[i] == 'n' ? '\n' : line[i];
        } else {
          value += line[i];
        }
      }
      if (i >= line.size()) return false;
      s.labels[key] = value;
      ++i;
      if (i < line.size() && line[i] == ',') ++i;
    }
    if (i >= line.size()) return false;
    ++i;
  }
  std::istringstream rest(line.substr(i));
  std::string v;
  if (!(rest >> v)) return false;
  if (v == "+Inf") {
    s.value = std::numeric_limits<double>::infinity();
    return true;
  }
  char* end = nullptr;
  s.value = std::strtod(v.c_str(), &end);
  return end && *end == 0;
}

std::string label(const Labels& l, const char* k) {
  auto it = l.find(k);
  return it == l.end() ? "" : it->second;
}

// The counter a sample adds to, "" for none.
std::string counter_of(const std::string& name, const std::string& op) {
  if (name == "eziotrace_syscall_bytes_total") {
    return op == "read" ? "read_bytes" : op == "write" ? "write_bytes" : "";
  }
  if (name == "eziotrace_syscall_calls_total") {
    if (op == "read" || op == "write") return op + "_calls";
    if (op == "fsync" || op == "fdatasync" || op == "sync_file_range") return "fsyncs";
    return "";
  }
  if (name == "eziotrace_block_bytes_total") {
    return op == "read" ? "block_read_bytes" : op == "write" ? "block_write_bytes" : "";
  }
  if (name == "eziotrace_block_requests_total") return "block_requests";
  if (name == "eziotrace_fs_calls_total") return "fs_calls";
  if (name == "eziotrace_dirty_throttle_seconds_sum") return "throttled_seconds";
  static const std::string pc = "eziotrace_pagecache_";
  if (name.starts_with(pc) && name.ends_with("_pages_total")) {
    std::string what = name.substr(pc.size(), name.size() - pc.size() - 12);
    return what + "_pages";
  }
  return "";
}

// The histogram a bucket sample adds to, "" for none.
std::string histogram_of(const std::string& name, const std::string& op) {
  if (name == "eziotrace_syscall_latency_seconds_bucket") {
    return op == "read" || op == "write" ? "syscall_" + op : "";
  }
  if (name == "eziotrace_block_service_seconds_bucket") return "block_service";
  if (name == "eziotrace_block_queue_seconds_bucket") return "block_queue";
  if (name == "eziotrace_fs_latency_seconds_bucket") {
    return op == "read" || op == "write" ? "fs_" + op : "";
  }
  return "";
}

double counter(const JobTotals* t, const std::string& k) {
  if (!t) return 0;
  auto it = t->counters.find(k);
  return it == t->counters.end() ? 0 : it->second;
}

// The upper bound of the bucket holding the 99th percentile of what was counted between the two
// cumulative histograms; nothing when nothing was.
std::optional<double> p99(const std::map<double, double>* before,
                          const std::map<double, double>& now) {
  std::vector<std::pair<double, double>> delta;
  for (const auto& [le, n] : now) {
    double b = 0;
    if (before) {
      auto it = before->find(le);
      if (it != before->end() && it->second <= n) b = it->second;
    }
    delta.emplace_back(le, n - b);
  }
  if (delta.empty() || delta.back().second <= 0) return std::nullopt;
  double want = 0.99 * delta.back().second;
  for (const auto& [le, n] : delta) {
    if (n >= want) return le;
  }
  return delta.back().first;
}

double sort_value(const JobView& v, const std::string& key) {
  auto r = [&v](const char* k) {
    auto it = v.per_second.find(k);
    return it == v.per_second.end() ? 0 : it->second;
  };
  // A job's calls' bytes, a device's VFS bytes (each line has the one or the other).
  double read = r("read_bytes") + r("vfs_read_bytes"),
         write = r("write_bytes") + r("vfs_write_bytes");
  if (key == "io") return read + write + r("block_read_bytes") + r("block_write_bytes");
  if (key == "read") return read;
  if (key == "write") return write;
  if (key == "block") return r("block_read_bytes") + r("block_write_bytes");
  if (key == "requests") return r("block_requests");
  if (key == "fsync") return r("fsyncs");
  if (key == "dirtied") return r("dirtied_pages");
  if (key == "throttle") return r("throttled_seconds");
  double worst = 0;  // latency: the job's worst p99
  for (const auto& [k, p] : v.p99_seconds) worst = std::max(worst, p.value_or(0));
  return worst;
}

}  // namespace

namespace {

// A device's own counters: the VFS layer's bytes, the requests of no job.
std::string device_counter_of(const Sample& s, const std::string& op) {
  if (s.name == "eziotrace_vfs_bytes_total") {
    return op == "read" ? "vfs_read_bytes" : op == "write" ? "vfs_write_bytes" : "";
  }
  if (s.name == "eziotrace_block_requests_total" && label(s.labels, "cgroup").empty()) {
    return "unattributed_requests";
  }
  return "";
}

// A sample added to a line's totals: to its counter, else to its histogram's bucket.
void add(JobTotals& t, const Sample& s, const std::string& counter, const std::string& histogram) {
  if (!counter.empty()) {
    t.counters[counter] += s.value;
    return;
  }
  std::string le = label(s.labels, "le");
  double bound =
      le == "+Inf" ? std::numeric_limits<double>::infinity() : std::strtod(le.c_str(), nullptr);
  t.histograms[histogram][bound] += s.value;
}

}  // namespace

NodeSample parse_exposition(const std::string& text, double time_s, TopBy by) {
  NodeSample out;
  out.time_s = time_s;
  std::istringstream in(text);
  std::string line;
  Sample s;
  while (std::getline(in, line)) {
    if (!parse_sample(line, s)) continue;
    std::string cgroup = label(s.labels, "cgroup"), device = label(s.labels, "device");
    // By job: no job's series (shared metadata, kernel threads) left out. By device: what has no
    // device (the system calls) left out.
    std::string key = by == TopBy::job ? cgroup : device;
    if (key.empty()) continue;
    std::string op = label(s.labels, "op");
    std::string c = counter_of(s.name, op);
    std::string h = c.empty() ? histogram_of(s.name, op) : "";
    std::string own = by == TopBy::device ? device_counter_of(s, op) : "";
    if (c.empty() && h.empty() && own.empty()) continue;
    JobTotals& line_of = out.jobs[key];
    if (auto user = label(s.labels, "user"); !user.empty()) line_of.users.insert(user);
    if (by == TopBy::device) {
      line_of.device = device;
      if (!cgroup.empty()) line_of.cgroups.insert(cgroup);
      if (auto fstype = label(s.labels, "fstype"); !fstype.empty()) line_of.fstype = fstype;
      if (auto mount = label(s.labels, "mount"); !mount.empty()) line_of.mounts.insert(mount);
      if (!own.empty()) add(line_of, s, own, {});
    } else {
      line_of.cgroup = cgroup;
      if (auto id = label(s.labels, "job_id"); !id.empty()) line_of.job_id = id;
      if (auto unit = label(s.labels, "unit"); !unit.empty()) line_of.unit = unit;
      if (auto slice = label(s.labels, "slice"); !slice.empty()) line_of.slice = slice;
      if (auto u = label(s.labels, "user_unit"); !u.empty()) line_of.user_unit = u;
    }
    if (!c.empty() || !h.empty()) add(line_of, s, c, h);
  }
  return out;
}

const std::vector<std::string>& sort_keys() {
  static const std::vector<std::string> keys = {"io",       "read",   "write",   "block",
                                                "requests", "fsync",  "dirtied", "throttle",
                                                "latency",  "cgroup", "device"};
  return keys;
}

std::vector<JobView> job_views(const NodeSample& before, const NodeSample& now,
                               const std::string& sort_key) {
  std::vector<JobView> out;
  double dt = now.time_s - before.time_s;
  for (const auto& [cgroup, t] : now.jobs) {
    JobView v;
    v.now = &t;
    auto old = before.jobs.find(cgroup);
    const JobTotals* prev = old == before.jobs.end() ? nullptr : &old->second;
    for (const auto& [k, n] : t.counters) {
      double b = counter(prev, k);
      double d = n >= b ? n - b : n;  // a smaller total: eziotraced started again
      v.per_second[k] = dt > 0 ? d / dt : 0;
    }
    for (const auto& [k, h] : t.histograms) {
      const std::map<double, double>* ph = nullptr;
      if (prev) {
        auto it = prev->histograms.find(k);
        if (it != prev->histograms.end()) ph = &it->second;
      }
      v.p99_seconds[k] = p99(ph, h);
    }
    v.sort_value = sort_value(v, sort_key);
    out.push_back(std::move(v));
  }
  std::stable_sort(out.begin(), out.end(), [&sort_key](const JobView& a, const JobView& b) {
    bool by_name = sort_key == "cgroup" || sort_key == "device";
    if (!by_name && a.sort_value != b.sort_value) return a.sort_value > b.sort_value;
    // By the name shown (a device: tmpfs:/tmp, not its 0:NN).
    return a.now->cgroup + device_display_name(*a.now) <
           b.now->cgroup + device_display_name(*b.now);
  });
  return out;
}

}  // namespace ezio::recorder::metrics
