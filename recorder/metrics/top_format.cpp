// SPDX-License-Identifier: GPL-2.0-only
// `eziotrace top`'s frames: the table a person reads, the JSON a script reads.
#include <fmt/format.h>

#include <cmath>

#include "recorder/metrics/top_jobs.h"

namespace ezio::recorder::metrics {
namespace {

double rate(const JobView& v, const char* k) {
  auto it = v.per_second.find(k);
  return it == v.per_second.end() ? 0 : it->second;
}

// 1023, 4.0K, 12.3M: bytes in powers of 1024.
std::string bytes(double b) {
  static const char* const units[] = {"", "K", "M", "G", "T"};
  int u = 0;
  while (b >= 1024 && u < 4) {
    b /= 1024;
    ++u;
  }
  return u == 0 ? fmt::format("{:.0f}", b) : fmt::format("{:.1f}{}", b, units[u]);
}

// 999, 1.2k, 3.4M: counts in powers of 1000.
std::string count(double n) {
  if (n < 1000)
    return n > 0 && n < 10 && n != std::floor(n) ? fmt::format("{:.1f}", n)
                                                 : fmt::format("{:.0f}", n);
  if (n < 1e6) return fmt::format("{:.1f}k", n / 1e3);
  return fmt::format("{:.1f}M", n / 1e6);
}

std::string seconds(std::optional<double> s) {
  if (!s) return "-";
  if (std::isinf(*s)) return ">1100s";
  if (*s < 1e-3) return fmt::format("{:.0f}us", *s * 1e6);
  if (*s < 1) return fmt::format("{:.1f}ms", *s * 1e3);
  return fmt::format("{:.1f}s", *s);
}

std::optional<double> worst(const JobView& v, std::initializer_list<const char*> keys) {
  std::optional<double> w;
  for (const char* k : keys) {
    auto it = v.p99_seconds.find(k);
    if (it != v.p99_seconds.end() && it->second && (!w || *it->second > *w)) w = it->second;
  }
  return w;
}

// The job's name: Slurm's id when it has one, else its systemd unit (with the cgroup path below
// it: a delegated subtree's parts apart), else its cgroup path; its end when too long.
std::string job_name(const JobTotals& t, size_t width) {
  std::string name = t.cgroup;
  if (!t.job_id.empty()) {
    name = "slurm:" + t.job_id;
  } else if (!t.unit.empty()) {
    size_t at = t.cgroup.find("/" + t.unit);
    name = at == std::string::npos ? t.unit : t.cgroup.substr(at + 1);
  }
  if (name.size() > width) name = "…" + name.substr(name.size() - width + 1);
  return name;
}

// The job's user, "+N" when it has N more.
std::string users(const JobTotals& t) {
  if (t.users.empty()) return "-";
  std::string first = t.users.begin()->substr(0, 8);
  if (t.users.size() == 1) return first;
  std::string more = fmt::format("+{}", t.users.size() - 1);
  return first.substr(0, 8 - more.size()) + more;
}

bool is_device_number(const std::string& name) {
  size_t colon = name.find(':');
  auto digits = [](std::string_view d) {
    return !d.empty() && d.find_first_not_of("0123456789") == std::string_view::npos;
  };
  return colon != std::string::npos && digits(std::string_view(name).substr(0, colon)) &&
         digits(std::string_view(name).substr(colon + 1));
}

// A name cut to the column's width keeps its end (a mount point's last components tell mounts
// apart) and, when it is `fstype:mount`, its type.
std::string fit_device_name(const std::string& name, size_t width) {
  if (name.size() <= width) return name;
  size_t colon = name.find(':');
  std::string head = colon != std::string::npos && colon + 4 < width && !is_device_number(name)
                         ? name.substr(0, colon + 1)
                         : "";
  return head + "…" + name.substr(name.size() - (width - head.size() - 1));
}

}  // namespace

std::string device_display_name(const JobTotals& device) {
  if (!is_device_number(device.device) || device.fstype.empty()) return device.device;
  // The shortest mount point is the file system's own; the longer ones are bind mounts in it.
  // "(other)" and "(id N)" are the exposition's stand-ins for a mount it cannot name.
  const std::string* shortest = nullptr;
  for (const std::string& m : device.mounts)
    if (!m.starts_with("(") && (!shortest || m.size() < shortest->size())) shortest = &m;
  return shortest ? device.fstype + ":" + *shortest : device.fstype + ":" + device.device;
}

std::string format_table(const std::vector<JobView>& jobs, const std::string& title, size_t limit) {
  constexpr const char* kRow =
      "{:<24} {:<8} {:>7} {:>7} {:>7} {:>6} {:>7} {:>6} {:>7} {:>7} {:>7} {:>7} {:>6} {:>7} "
      "{:>7} {:>5}\n";
  std::string out = title + "\n";
  // Layer by layer, as a call goes down: system calls, file system, page cache, block.
  out +=
      fmt::format(kRow, "JOB", "USER", "READ/s", "WRITE/s", "CALLS/s", "FSYNC", "FSOPS/s", "P99FS",
                  "DIRTY/s", "MISS/s", "BLKRD/s", "BLKWR/s", "REQ/s", "P99SYS", "P99BLK", "THR%");
  size_t shown = 0;
  for (const JobView& v : jobs) {
    if (limit && shown++ == limit) break;
    out += fmt::format(
        kRow, job_name(*v.now, 24), users(*v.now), bytes(rate(v, "read_bytes")),
        bytes(rate(v, "write_bytes")), count(rate(v, "read_calls") + rate(v, "write_calls")),
        count(rate(v, "fsyncs")), count(rate(v, "fs_calls")),
        seconds(worst(v, {"fs_read", "fs_write"})), count(rate(v, "dirtied_pages")),
        count(rate(v, "missed_pages") + rate(v, "readahead_pages")),
        bytes(rate(v, "block_read_bytes")), bytes(rate(v, "block_write_bytes")),
        count(rate(v, "block_requests")), seconds(worst(v, {"syscall_read", "syscall_write"})),
        seconds(worst(v, {"block_service"})),
        fmt::format("{:.0f}", std::min(100.0, rate(v, "throttled_seconds") * 100)));
  }
  if (jobs.empty()) out += "(no job has done I/O since eziotraced started)\n";
  return out;
}

std::string format_device_table(const std::vector<JobView>& devices, const std::string& title,
                                size_t limit) {
  constexpr const char* kRow =
      "{:<20} {:>4} {:>7} {:>7} {:>7} {:>6} {:>7} {:>7} {:>7} {:>7} {:>6} {:>6} {:>7} {:>7}\n";
  std::string out = title + "\n";
  out += fmt::format(kRow, "DEVICE", "JOBS", "VFSRD/s", "VFSWR/s", "FSOPS/s", "P99FS", "DIRTY/s",
                     "MISS/s", "BLKRD/s", "BLKWR/s", "REQ/s", "NOJOB%", "P99BLK", "P99Q");
  size_t shown = 0;
  for (const JobView& v : devices) {
    if (limit && shown++ == limit) break;
    std::string device = fit_device_name(device_display_name(*v.now), 20);
    double requests = rate(v, "block_requests");
    // The share of the frame's requests no job is charged with (file-system metadata, journal).
    std::string no_job =
        requests > 0 ? fmt::format("{:.0f}", 100 * rate(v, "unattributed_requests") / requests)
                     : "-";
    out += fmt::format(kRow, device, v.now->cgroups.size(), bytes(rate(v, "vfs_read_bytes")),
                       bytes(rate(v, "vfs_write_bytes")), count(rate(v, "fs_calls")),
                       seconds(worst(v, {"fs_read", "fs_write"})), count(rate(v, "dirtied_pages")),
                       count(rate(v, "missed_pages") + rate(v, "readahead_pages")),
                       bytes(rate(v, "block_read_bytes")), bytes(rate(v, "block_write_bytes")),
                       count(requests), no_job, seconds(worst(v, {"block_service"})),
                       seconds(worst(v, {"block_queue"})));
  }
  if (devices.empty()) out += "(no device has seen I/O since eziotraced started)\n";
  return out;
}

nlohmann::json frame_json(const std::vector<JobView>& jobs, const std::string& source,
                          double interval_s, double unix_time) {
  nlohmann::json out = {{"source", source}, {"time", unix_time}, {"interval_s", interval_s}};
  out["jobs"] = nlohmann::json::array();
  for (const JobView& v : jobs) {
    nlohmann::json j = {
        {"totals", v.now->counters}, {"per_second", v.per_second}, {"users", v.now->users}};
    if (v.now->device.empty()) {
      j["cgroup"] = v.now->cgroup;
    } else {
      j["device"] = v.now->device;
      j["name"] = device_display_name(*v.now);
      j["jobs"] = v.now->cgroups;
      if (!v.now->fstype.empty()) j["fstype"] = v.now->fstype;
      j["mounts"] = v.now->mounts;
    }
    if (!v.now->job_id.empty()) j["job_id"] = v.now->job_id;
    if (!v.now->unit.empty()) j["unit"] = v.now->unit;
    if (!v.now->slice.empty()) j["slice"] = v.now->slice;
    if (!v.now->user_unit.empty()) j["user_unit"] = v.now->user_unit;
    nlohmann::json p = nlohmann::json::object();
    for (const auto& [k, s] : v.p99_seconds) {
      p[k] = s && !std::isinf(*s) ? nlohmann::json(*s) : nlohmann::json(nullptr);
    }
    j["p99_seconds"] = p;
    out["jobs"].push_back(std::move(j));
  }
  return out;
}

}  // namespace ezio::recorder::metrics
