// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Follows the job_<id> cgroups of a Slurm node as they come and go (--flight-slurm,
// docs/flight-recorder.md): inotify on the directory that holds them, which is read again whole at
// each event (an event lost to a full inotify queue costs nothing). slurmd makes that directory:
// until it exists, poll() looks for it (the flight recorder's timer), at each of the places given
// (Slurm names it after the node when built with --enable-multiple-slurmd, as Debian's is).
#include <filesystem>
#include <nlohmann/json.hpp>
#include <vector>

#include "common/unique_fd.h"
#include "recorder/service/slurm_jobs.h"

namespace ezio::recorder::service {

class SlurmWatch {
 public:
  // places: where the directory of the job_<id> cgroups may be (absolute), the first that exists
  // is watched; act: what to do with a job's directory (its absolute path) as it comes (add:
  // false when it cannot be recorded) and goes.
  SlurmWatch(std::vector<std::filesystem::path> places, SlurmJobSet::Actions act);
  int fd() const { return inotify_.get(); }
  // fd() is readable: the directory has changed.
  void on_event();
  // Now and then: watches the directory once it exists (and again after it went).
  void poll();
  nlohmann::json status() const;

 private:
  void rescan();
  std::vector<std::filesystem::path> places_;
  std::filesystem::path dir_;  // the one watched, or the last watched
  SlurmJobSet::Actions act_;
  SlurmJobSet jobs_;
  UniqueFd inotify_;
  int watch_ = -1;  // on dir_, -1 while it does not exist
};

}  // namespace ezio::recorder::service
