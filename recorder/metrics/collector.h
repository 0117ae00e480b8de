// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The metrics' table read and named: each series' cgroup path and Slurm job id, each device's
// name. A cgroup that ended is reported once more (its last counts), then its series leave the
// table; so does a mount unmounted, whose slot in the mount table is freed. Thread-safe: the HTTP
// endpoint and the textfile writer both scrape.
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "recorder/metrics/cgroup_names.h"
#include "recorder/metrics/exposition.h"
#include "recorder/metrics/metrics_programs.h"
#include "recorder/metrics/mount_names.h"

namespace ezio::recorder::metrics {

class Collector {
 public:
  Collector(const MetricsPrograms& programs, std::filesystem::path cgroup_mount);
  // The metrics now, as text of format f.
  std::string scrape(Format f);
  // The snapshot itself (the tests look at it).
  Snapshot snapshot();

 private:
  std::string device_name(uint32_t dev);
  std::string user_name(uint32_t uid);
  std::set<uint32_t> gone_mounts(const std::vector<Series>& series);
  const MetricsPrograms& programs_;
  CgroupNames names_;
  MountNames mounts_;
  std::map<uint32_t, std::string> devices_;
  std::map<uint32_t, std::string> users_;
  uint64_t ended_ = 0;
  uint64_t ended_mounts_ = 0;
  std::mutex mutex_;
};

}  // namespace ezio::recorder::metrics
