// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/service/slurm_watch.h"

#include <sys/inotify.h>
#include <unistd.h>

#include <cerrno>
#include <set>

#include "common/error.h"
#include "common/log.h"

namespace fs = std::filesystem;

namespace ezio::recorder::service {

SlurmWatch::SlurmWatch(std::vector<fs::path> places, SlurmJobSet::Actions act)
    : places_(std::move(places)), dir_(places_.at(0)) {
  // The job set names jobs by their directory's name; the recorder wants their path.
  act_.add = [this, add = std::move(act.add)](const std::string& n) { return add(dir_ / n); };
  act_.remove = [this, rm = std::move(act.remove)](const std::string& n) { rm(dir_ / n); };
  act_.cancel = [this, cancel = std::move(act.cancel)](const std::string& n) {
    if (cancel) cancel(dir_ / n);
  };
  inotify_ = UniqueFd(inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
  if (!inotify_) fail("inotify_init1: {}", errno_text(errno));
  for (const fs::path& p : places_) {
    spdlog::info("flight recorder: following the Slurm jobs of {} once it is there", p.string());
  }
}

void SlurmWatch::poll() {
  if (watch_ >= 0) return;
  for (const fs::path& p : places_) {
    // IN_DELETE_SELF: slurmd's restart may remove the directory, whose jobs are gone with it.
    watch_ = inotify_add_watch(
        inotify_.get(), p.c_str(),
        IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF | IN_ONLYDIR);
    if (watch_ >= 0) {
      dir_ = p;
      spdlog::info("flight recorder: watching {}", dir_.string());
      rescan();
      return;
    }
    if (errno != ENOENT) spdlog::warn("inotify on {}: {}", p.string(), errno_text(errno));
  }
}

void SlurmWatch::on_event() {
  alignas(inotify_event) char buf[4096];
  bool gone = false;
  for (;;) {
    ssize_t n = read(inotify_.get(), buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    for (char* p = buf; p < buf + n;) {
      auto* e = reinterpret_cast<inotify_event*>(p);
      gone |= (e->mask & (IN_DELETE_SELF | IN_IGNORED)) != 0;
      p += sizeof(inotify_event) + e->len;
    }
  }
  if (gone) {
    watch_ = -1;
    spdlog::info("flight recorder: {} went away", dir_.string());
  }
  rescan();
}

void SlurmWatch::rescan() {
  std::set<std::string> present;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir_, ec)) {
    std::string name = entry.path().filename().string();
    if (slurm_job_of_dir(name) && entry.is_directory(ec)) present.insert(name);
  }
  jobs_.reconcile(present, act_);
}

void SlurmWatch::settle(const fs::path& job, const std::string& why) {
  jobs_.settle(job.filename().string(), why);
}

nlohmann::json SlurmWatch::status() const {
  nlohmann::json s = jobs_.status();
  s["dir"] = dir_.string();
  s["watching"] = watch_ >= 0;
  return s;
}

}  // namespace ezio::recorder::service
