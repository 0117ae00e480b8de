// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Follows the job_<id> cgroups of a Slurm node as they come and go (--flight-slurm,
// docs/flight-recorder.md): inotify on the directory that holds them, which is read again whole at
// each event (an event lost to a full inotify queue costs nothing). Slurm's step daemon makes that
// directory at its first job: until it exists, poll() looks for it (the flight recorder's timer).
#include <filesystem>
#include <nlohmann/json.hpp>

#include "common/unique_fd.h"
#include "recorder/service/slurm_jobs.h"

namespace ezio::recorder::service {

class SlurmWatch {
 public:
  // dir: the directory of the job_<id> cgroups (absolute); act: what to do with a job's directory
  // name as it comes (add: false when it cannot be recorded) and goes.
  SlurmWatch(std::filesystem::path dir, SlurmJobSet::Actions act);
  int fd() const { return inotify_.get(); }
  // fd() is readable: the directory has changed.
  void on_event();
  // Now and then: watches the directory once it exists (and again after it went).
  void poll();
  nlohmann::json status() const;

 private:
  void rescan();
  std::filesystem::path dir_;
  SlurmJobSet::Actions act_;
  SlurmJobSet jobs_;
  UniqueFd inotify_;
  int watch_ = -1;  // on dir_, -1 while it does not exist
};

}  // namespace ezio::recorder::service
