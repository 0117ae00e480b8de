// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The Slurm jobs of a node as eziotraced's flight recorder follows them (--flight-slurm,
// docs/flight-recorder.md): the job_<id> cgroups of Slurm's cgroup/v2 plugin, their owner in
// scontrol's answer, and the bookkeeping of which are recorded. The parts here touch neither the
// file system nor the kernel (unit-tested); slurm_watch.h watches the directory,
// slurm_user_lookups.h runs scontrol.
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
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

// Which job directories are recorded. reconcile() with the names present now begins the new ones
// (add(): their user is asked for and their ring made, apart from the service's loop; a reason
// when it cannot even begin), removes those recorded that are gone and cancels those pending that
// are gone. settle() ends a pending one: recorded, or refused with a reason (counted, listed, not
// tried again while it is there).
class SlurmJobSet {
 public:
  struct Actions {
    std::function<std::string(const std::string& name)> add;  // "" begun, else why not
    std::function<void(const std::string& name)> remove;      // a recorded job gone
    std::function<void(const std::string& name)> cancel;      // a pending job gone
  };
  void reconcile(const std::set<std::string>& present, const Actions& act);
  // add()'s outcome: recorded (why empty) or refused; nothing for a job no longer pending (gone
  // meanwhile: cancelled).
  void settle(const std::string& name, const std::string& why);
  const std::set<std::string>& recorded() const { return recorded_; }
  const std::set<std::string>& pending() const { return pending_; }
  nlohmann::json status() const;

 private:
  void refuse(const std::string& name, const std::string& why);
  std::set<std::string> recorded_, pending_;
  std::map<std::string, std::string> refused_;  // those present, with why
  uint64_t added_ = 0, removed_ = 0, refused_total_ = 0, gone_pending_ = 0;
};

}  // namespace ezio::recorder::service
