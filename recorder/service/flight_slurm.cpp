// SPDX-License-Identifier: GPL-2.0-only
// The flight recorder's Slurm jobs (--flight-slurm, docs/flight-recorder.md). A job_<id> cgroup
// that comes begins its job's start, which the service's loop never waits for: its user is asked
// from scontrol (slurm_user_lookups.h), then its ring is made on the ring maker's thread
// (ring_maker.h), and its session opens when the ring is there. A job whose cgroup goes meanwhile
// is cancelled: its lookup killed, or its ring removed again once made.
#include <unistd.h>

#include <algorithm>

#include "common/error.h"
#include "common/log.h"
#include "recorder/core/recording_info.h"
#include "recorder/service/flight_recorder.h"

namespace fs = std::filesystem;

namespace ezio::recorder::service {

namespace {

// system.slice/<node>_slurmstepd.scope: the node's name is its short host name, as slurmd's is
// unless slurm.conf says otherwise.
std::string node_scope() {
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  std::string node(host);
  return "system.slice/" + node.substr(0, node.find('.')) + "_slurmstepd.scope";
}

}  // namespace

void FlightRecorder::start_slurm() {
  if (config_.slurm_root.empty()) return;
  std::vector<fs::path> places{mount_ / fs::path(config_.slurm_root).relative_path()};
  // Slurm built with --enable-multiple-slurmd (Debian's) names the scope after the node.
  if (config_.slurm_root == kSlurmCgroupRoot) places.push_back(mount_ / node_scope());
  auto under_mount = [this](const fs::path& dir) {
    return "/" + dir.lexically_relative(mount_).string();
  };
  lookups_ =
      std::make_unique<SlurmUserLookups>(config_.scontrol, uint64_t(config_.slurm_timeout * 1e9));
  slurm_ = std::make_unique<SlurmWatch>(
      places,
      SlurmJobSet::Actions{
          [this, under_mount](const std::string& d) { return add_slurm_job(under_mount(d)); },
          [this, under_mount](const std::string& d) { remove_job(under_mount(d)); },
          [this, under_mount](const std::string& d) { cancel_slurm_job(under_mount(d)); }});
}

void FlightRecorder::start(RingMaker& maker) {
  maker_ = &maker;
  if (slurm_) slurm_->poll();
}

int FlightRecorder::watch_fd() const { return slurm_ ? slurm_->fd() : -1; }

void FlightRecorder::on_watch() {
  if (slurm_) slurm_->on_event();
}

std::string FlightRecorder::add_slurm_job(const std::string& cgroup) {
  std::string id = *slurm_job_of_dir(fs::path(cgroup).filename().string());
  try {
    lookups_->start(id, monotonic_ns());
  } catch (const Error& e) {
    std::string why = fmt::format("its user is not known: {}", e.what());
    spdlog::error("flight recorder: Slurm job {} is not recorded: {}", id, why);
    return why;
  }
  starts_.push_back({cgroup, id});
  spdlog::info("flight recorder: Slurm job {} came ({}): its user is asked from {}", id, cgroup,
               config_.scontrol);
  return "";
}

void FlightRecorder::cancel_slurm_job(const std::string& cgroup) {
  auto it = std::find_if(starts_.begin(), starts_.end(),
                         [&](const SlurmStart& s) { return s.cgroup == cgroup && !s.gone; });
  if (it == starts_.end()) return;
  spdlog::info("flight recorder: Slurm job {} ended before its recording began", it->id);
  if (it->slot != RingMaker::kNoSlot) {
    it->gone = true;  // its ring, being made, is removed when it comes
    return;
  }
  lookups_->cancel(it->id);
  starts_.erase(it);
}

void FlightRecorder::on_lookups() {
  for (const SlurmUserLookups::Answer& a : lookups_->on_ready()) on_user(a);
}

void FlightRecorder::on_user(const SlurmUserLookups::Answer& answer) {
  auto it = std::find_if(starts_.begin(), starts_.end(), [&](const SlurmStart& s) {
    return s.id == answer.id && s.slot == RingMaker::kNoSlot;
  });
  if (it == starts_.end()) return;
  if (!answer.uid) return settle(it->cgroup, "its user is not known: " + answer.why);
  try {
    it->slot = kernel_.reserve();
  } catch (const Error& e) {
    // Most likely every session slot taken (recordings and jobs share them).
    return settle(it->cgroup, e.what());
  }
  it->user = *answer.uid;
  // One ring: the job's buffer keeps its records in the order they were read.
  maker_->request({it->slot, config_.ring_bytes, /*spare=*/false, /*per_cpu=*/false});
}

bool FlightRecorder::take_ring(RingMaker::Done& d) {
  auto it = std::find_if(starts_.begin(), starts_.end(),
                         [&](const SlurmStart& s) { return s.slot == d.job.slot; });
  if (it == starts_.end()) return false;
  SlurmStart start = std::move(*it);
  starts_.erase(it);
  on_slurm_ring(start, d);
  return true;
}

void FlightRecorder::on_slurm_ring(SlurmStart& start, RingMaker::Done& d) {
  if (!d.error.empty()) {
    kernel_.unreserve(start.slot);
    if (!start.gone) settle(start.cgroup, "no ring buffer: " + d.error);
    return;
  }
  // Removed on the ring maker's thread; the loop gives its slot back then (daemon.cpp).
  if (start.gone) return maker_->request({start.slot, 0, /*spare=*/true});
  try {
    JobSpec s = spec(start.cgroup, Origin::kSlurm);
    s.owner = start.user;
    open_job(s, MadeRing{start.slot, std::move(d.rings)});
    settle(start.cgroup, "");
  } catch (const Error& e) {
    settle(start.cgroup, e.what());
  }
}

void FlightRecorder::settle(std::string cgroup, const std::string& why) {
  auto it = std::find_if(starts_.begin(), starts_.end(),
                         [&](const SlurmStart& s) { return s.cgroup == cgroup; });
  if (it != starts_.end()) starts_.erase(it);
  if (!why.empty()) {
    spdlog::error("flight recorder: Slurm job {} is not recorded: {}",
                  slurm_job_of_dir(fs::path(cgroup).filename().string()).value_or(cgroup), why);
  }
  slurm_->settle(fs::path(cgroup), why);
}

nlohmann::json FlightRecorder::slurm_status() const {
  if (!slurm_) return nlohmann::json();
  nlohmann::json s = slurm_->status();
  // What the starts hold: their session slots (a ring being made), scontrol's children (those
  // killed included until they are reaped).
  s["starting"] = starts_.size();
  s["scontrol_children"] = lookups_->children();
  s["scontrol_waiting"] = lookups_->waiting();
  return s;
}

}  // namespace ezio::recorder::service
