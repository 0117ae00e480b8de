// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The Slurm jobs of a node as eziotraced's flight recorder follows them (--flight-slurm,
// docs/flight-recorder.md): the job_<id> cgroups of Slurm's cgroup/v2 plugin, their owner from
// scontrol, and the bookkeeping of which are recorded. The parts here touch neither the file system
// nor the kernel (unit-tested); slurm_watch.h watches the directory.
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>

namespace ezio::recorder::service {

// Where Slurm 22.05's cgroup/v2 plugin makes its jobs' cgroups, under the cgroup2 mount:
// system.slice/slurmstepd.scope/job_<id>/step_<n>/user/task_<k> (with or without systemd).
inline constexpr const char* kSlurmCgroupRoot = "/system.slice/slurmstepd.scope";

// The Slurm job id of a directory named job_<id> (digits), else nothing.
std::optional<std::string> slurm_job_of_dir(const std::string& name);

// The uid in scontrol's `show job -o` line (UserId=name(uid)), else nothing.
std::optional<uid_t> scontrol_user_id(const std::string& output);

// The uid of Slurm job id's user, asked from `scontrol show job -o ID` (within timeout_ms); nothing
// when scontrol fails or does not say (logged).
std::optional<uid_t> slurm_job_user(const std::string& id, int timeout_ms = 10000);

// Which job directories are recorded: reconcile() with the names present now adds the new ones
// (add() false: it did not fit, counted and not tried again while it is there) and removes those
// gone.
class SlurmJobSet {
 public:
  struct Actions {
    std::function<bool(const std::string& name)> add;
    std::function<void(const std::string& name)> remove;
  };
  void reconcile(const std::set<std::string>& present, const Actions& act);
  const std::set<std::string>& recorded() const { return recorded_; }
  nlohmann::json status() const;

 private:
  std::set<std::string> recorded_, refused_;
  uint64_t added_ = 0, removed_ = 0, refused_total_ = 0;
};

}  // namespace ezio::recorder::service
