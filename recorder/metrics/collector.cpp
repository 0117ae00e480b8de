// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/metrics/collector.h"

#include <fmt/format.h>
#include <pwd.h>

#include <filesystem>
#include <set>
#include <system_error>
#include <vector>

#include "recorder/metrics/systemd_unit.h"

namespace ezio::recorder::metrics {

Collector::Collector(const MetricsPrograms& programs, std::filesystem::path cgroup_mount)
    : programs_(programs), names_(std::move(cgroup_mount)) {}

// Kernel dev_t (MAJOR << 20 | MINOR) to the disk's name in /sys/dev/block.
std::string Collector::device_name(uint32_t dev) {
  auto it = devices_.find(dev);
  if (it != devices_.end()) return it->second;
  std::string numbers = fmt::format("{}:{}", dev >> 20, dev & ((1u << 20) - 1));
  std::error_code ec;
  auto target = std::filesystem::read_symlink("/sys/dev/block/" + numbers, ec);
  std::string name = ec ? numbers : target.filename().string();
  // Loop devices are set up again under the same numbers: their names are not kept.
  if (!ec) devices_[dev] = name;
  return name;
}

// A uid to its user's name, its number when the user database has none.
std::string Collector::user_name(uint32_t uid) {
  auto it = users_.find(uid);
  if (it != users_.end()) return it->second;
  passwd pw{}, *found = nullptr;
  std::vector<char> buf(16384);
  std::string name = getpwuid_r(uid, &pw, buf.data(), buf.size(), &found) == 0 && found
                         ? std::string(pw.pw_name)
                         : std::to_string(uid);
  users_[uid] = name;
  return name;
}

namespace {

// The job's labels: the cgroup path, then Slurm's job id, else the systemd unit and slice.
void name_job(NamedSeries& n, std::string cgroup) {
  n.cgroup = std::move(cgroup);
  if (auto job = slurm_job_id(n.cgroup)) {
    n.job_id = *job;
    return;
  }
  SystemdPlace place = systemd_place(n.cgroup);
  n.unit = std::move(place.unit);
  n.slice = std::move(place.slice);
}

}  // namespace

Snapshot Collector::snapshot() {
  std::lock_guard lock(mutex_);
  Snapshot snap;
  snap.max_series = programs_.max_series();
  snap.latency_every = programs_.latency_every();
  snap.overflow = programs_.overflow();
  names_.refresh();
  mounts_.refresh();
  std::vector<ezio_metric_key> ended;
  std::set<uint64_t> ended_ids;
  for (const Series& s : programs_.read()) {
    NamedSeries n;
    n.s = s;
    uint64_t id = s.key.cgroup;
    if (id != 0) {
      std::optional<std::string> path = names_.path_of(id);
      if (!path) {  // ended: this is its last report
        ended.push_back(s.key);
        ended_ids.insert(id);
        path = names_.last_path_of(id);
      }
      name_job(n, path ? *path : fmt::format("(ended, id {})", id));
      n.user = user_name(s.key.uid);
    }
    if (s.key.dev) n.device = device_name(s.key.dev);
    if (s.key.op >= EZIO_M_VFS_READ && s.key.op <= EZIO_M_VFS_FDATASYNC) {
      MountLabels m = mounts_.of_mount(s.key.mnt, s.key.fs);
      n.mount = m.mount;
      n.fstype = m.fstype;
    } else if (s.key.op >= EZIO_M_FS_READ && s.key.op <= EZIO_M_FS_FSYNC) {
      MountLabels m = mounts_.of_device(s.key.dev, s.key.fs);
      n.mount = m.mount;
      n.fstype = m.fstype;
    }
    snap.series.push_back(std::move(n));
  }
  programs_.forget(ended);
  ended_ += ended_ids.size();
  snap.ended_cgroups = ended_;
  snap.syscall_hook = syscall_hook_name(programs_.syscall_hook());
  return snap;
}

std::string Collector::scrape(Format f) { return expose(snapshot(), f); }

}  // namespace ezio::recorder::metrics
