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

bool is_vfs(uint16_t op) { return op >= EZIO_M_VFS_READ && op <= EZIO_M_VFS_FDATASYNC; }

void set_mount(NamedSeries& n, MountLabels m) {
  n.mount = std::move(m.mount);
  n.fstype = std::move(m.fstype);
}

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
  n.user_unit = std::move(place.user_unit);
}

}  // namespace

// The mounts of the mount table (and of the VFS series) mounted in no namespace any more, or whose
// id another mount has taken since the last scrape: their series are reported once more, then they
// and their slots go. Asked after the series were read, the tables read after: a mount a series or
// a slot names was mounted before, so one missing from every table is gone (or detached lazily,
// its files still open: its slot is taken again).
std::set<uint32_t> Collector::gone_mounts(const std::vector<Series>& series) {
  std::set<uint32_t> ids;
  for (uint32_t id : programs_.mount_ids()) ids.insert(id);
  for (const Series& s : series) {
    if (is_vfs(s.key.op) && s.key.mnt != EZIO_M_MNT_OTHER) ids.insert(s.key.mnt);
  }
  std::erase_if(ids, [this](uint32_t id) { return mounts_.mounted(id) && !mounts_.replaced(id); });
  for (uint32_t id : mounted_in_other_namespaces(ids)) ids.erase(id);
  return ids;
}

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
  std::vector<Series> series = programs_.read();
  std::set<uint32_t> gone = gone_mounts(series);
  for (const Series& s : series) {
    NamedSeries n;
    n.s = s;
    uint64_t id = s.key.cgroup;
    if (id != 0) {
      std::optional<std::string> path = names_.path_of(id);
      if (!path) {  // ended: this is its last report
        ended.push_back(s.key);
        ended_ids.insert(id);
        path = names_.last_path_of(id);
        // Made and removed since the last walk: named when it was made.
        if (!path) path = programs_.made_cgroup_path(id);
      }
      name_job(n, path ? *path : fmt::format("(ended, id {})", id));
      n.user = user_name(s.key.uid);
    }
    if (s.key.dev) n.device = device_name(s.key.dev);
    if (is_vfs(s.key.op) && gone.count(s.key.mnt)) {  // unmounted: its last report
      ended.push_back(s.key);
      set_mount(n, mounts_.of_ended_mount(s.key.mnt, s.key.fs));
    } else if (is_vfs(s.key.op)) {
      set_mount(n, mounts_.of_mount(s.key.mnt, s.key.fs));
    } else if (s.key.op >= EZIO_M_FS_READ && s.key.op <= EZIO_M_FS_FSYNC) {
      set_mount(n, mounts_.of_device(s.key.dev, s.key.fs));
    }
    snap.series.push_back(std::move(n));
  }
  programs_.forget(ended);
  programs_.forget_cgroup_names(ended_ids);
  programs_.forget_mounts({gone.begin(), gone.end()});
  ended_ += ended_ids.size();
  ended_mounts_ += gone.size();
  snap.ended_cgroups = ended_;
  snap.ended_mounts = ended_mounts_;
  snap.mounts = programs_.mount_ids().size();
  snap.max_mounts = programs_.max_mounts();
  snap.syscall_hook = syscall_hook_name(programs_.syscall_hook());
  snap.fs_hooks = programs_.fs_hooks();
  return snap;
}

std::string Collector::scrape(Format f) { return expose(snapshot(), f); }

}  // namespace ezio::recorder::metrics
