// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Follows the job_<id> cgroups of a Slurm node as they come and go (--flight-slurm,
// docs/flight-recorder.md): inotify on the directory that holds them, which is read again whole at
// each event (an event lost to a full inotify queue costs nothing). slurmd makes that directory:
// until it exists, poll() looks for it (the flight recorder's timer), at each of the places given
// (Slurm names it after the node when built with --enable-multiple-slurmd, as Debian's is).
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/unique_fd.h"
#include "recorder/service/slurm_jobs.h"

namespace ezio::recorder::service {

class SlurmWatch {
 public:
  // places: where the directory of the job_<id> cgroups may be (absolute), the first that exists
  // is watched; act: what to do with a job's directory (its absolute path) as it comes (add:
  // begins its recording, settle() ends it; a reason when it cannot even begin) and goes (remove
  // if recorded, cancel if pending). Nothing is looked at before the first poll().
  SlurmWatch(std::vector<std::filesystem::path> places, SlurmJobSet::Actions act);
  int fd() const { return inotify_.get(); }
  // fd() is readable: the directory has changed.
  void on_event();
  // Now and then: watches the directory once it exists (and again after it went).
  void poll();
  // The outcome of add() for job (its directory's path): recorded (why empty), or refused.
  void settle(const std::filesystem::path& job, const std::string& why);
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
