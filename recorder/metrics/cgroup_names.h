// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The jobs behind cgroup v2 ids: a cgroup's id is its directory's inode number on the cgroup2
// mount, so its path is found by walking the mount (again when an id is new).
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

namespace ezio::recorder::metrics {

// The cgroup v2 mount: /sys/fs/cgroup on a unified host, /sys/fs/cgroup/unified on a hybrid one
// (from /proc/self/mountinfo). Fails (ezio::Error) when there is none.
std::filesystem::path cgroup2_mount();

// Slurm's job id in a cgroup path (…/job_<id>/…, as Slurm's cgroup plugins name them), if any.
std::optional<std::string> slurm_job_id(const std::string& cgroup_path);

class CgroupNames {
 public:
  explicit CgroupNames(std::filesystem::path mount) : mount_(std::move(mount)) {}
  // The path of the cgroup (relative to the mount, "/" for the root), or nothing when it does not
  // exist (any more). The mount is walked again, once per refresh(), when id is not known.
  std::optional<std::string> path_of(uint64_t id);
  // The path id had when it was last seen, even if it has ended since.
  std::optional<std::string> last_path_of(uint64_t id) const;
  // Lets the next unknown id walk the mount again.
  void refresh() { walked_ = false; }

 private:
  void walk();
  std::filesystem::path mount_;
  std::map<uint64_t, std::string> paths_;  // of the last walk
  std::map<uint64_t, std::string> seen_;   // ever
  bool walked_ = false;
};

}  // namespace ezio::recorder::metrics
