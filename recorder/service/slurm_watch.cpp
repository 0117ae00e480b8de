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

SlurmWatch::SlurmWatch(fs::path dir, SlurmJobSet::Actions act)
    : dir_(std::move(dir)), act_(std::move(act)) {
  inotify_ = UniqueFd(inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
  if (!inotify_) fail("inotify_init1: {}", errno_text(errno));
  spdlog::info("flight recorder: following the Slurm jobs of {}", dir_.string());
  poll();
}

void SlurmWatch::poll() {
  if (watch_ >= 0) return;
  // IN_DELETE_SELF: slurmd's restart may remove the directory, whose jobs are gone with it.
  watch_ = inotify_add_watch(
      inotify_.get(), dir_.c_str(),
      IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF | IN_ONLYDIR);
  if (watch_ < 0) {
    if (errno != ENOENT) spdlog::warn("inotify on {}: {}", dir_.string(), errno_text(errno));
    return;
  }
  spdlog::info("flight recorder: watching {}", dir_.string());
  rescan();
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

nlohmann::json SlurmWatch::status() const {
  nlohmann::json s = jobs_.status();
  s["dir"] = dir_.string();
  s["watching"] = watch_ >= 0;
  return s;
}

}  // namespace ezio::recorder::service
