// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// eziotraced's flight recorder (docs/flight-recorder.md): per job (a cgroup v2), a session of the
// loaded programs whose processes are the job owner's processes in that cgroup (bpf/flight.bpf.h),
// its ring drained continuously into an overwrite buffer of the last N seconds (flight_buffer.h),
// and the snapshots that hand a window of it to the job's owner or root.
#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/unique_fd.h"
#include "recorder/service/daemon.h"
#include "recorder/service/flight_buffer.h"
#include "recorder/service/flight_rules.h"
#include "recorder/service/peer.h"
#include "recorder/service/ring_maker.h"
#include "recorder/service/slurm_user_lookups.h"
#include "recorder/service/slurm_watch.h"

namespace ezio::recorder {
class RingReader;
}

namespace ezio::recorder::service {

struct FlightConfig {
  std::vector<std::string> cgroups;  // paths under the cgroup2 mount ("/a/b" or "a/b")
  // Every Slurm job_<id> cgroup under this directory (a path under the cgroup2 mount) as it comes
  // and goes, owned by the job's user (slurm_watch.h); none when empty. The default
  // (kSlurmCgroupRoot) is also looked for as system.slice/<node>_slurmstepd.scope.
  std::string slurm_root;
  std::string scontrol = "scontrol";  // asked for a Slurm job's user: a path, or looked for in PATH
  double slurm_timeout = 10;          // seconds scontrol may take, else the job is not recorded
  double seconds = 30;                // the last N seconds kept
  uint64_t max_bytes = 64ull << 20;   // per job: the records kept, at most
  uint64_t ring_bytes = 8ull << 20;   // per job: the BPF ring between two drains
  RulesConfig rules;                  // automatic snapshots: none without rules
};

class FlightRecorder {
 public:
  // Opens a session per cgroup (the programs attached from now on) and adds the owner's processes
  // already in it or below; follows the Slurm jobs of config.slurm_root. mount: the cgroup2 mount.
  // Fails (ezio::Error) on a cgroup that is not there.
  FlightRecorder(SessionKernel& kernel, const FlightConfig& config, std::filesystem::path mount);
  ~FlightRecorder();
  FlightRecorder(const FlightRecorder&) = delete;
  FlightRecorder& operator=(const FlightRecorder&) = delete;

  bool any() const { return !jobs_.empty(); }
  // With the loop's start: follows the Slurm jobs from now on, their rings made by maker (which
  // outlives the loop's use of the recorder). Not before: scontrol's children are the loop's.
  void start(RingMaker& maker);
  // Readable when the Slurm jobs' directory has changed (-1 without --flight-slurm): on_watch()
  // begins the new jobs and removes those gone (the programs may then be detached if nothing
  // else needs them).
  int watch_fd() const;
  void on_watch();
  // Readable when scontrol answered about a new job (-1 without --flight-slurm): on_lookups()
  // has its ring made, or refuses it.
  int lookups_fd() const { return lookups_ ? lookups_->fd() : -1; }
  void on_lookups();
  // A ring maker's result: true when it was a Slurm job's, which opens now (or is refused).
  bool take_ring(RingMaker::Done& d);
  // Readable every 100 ms: on_timer() drains the rings and forgets what is too old.
  int timer_fd() const { return timer_.get(); }
  void on_timer();
  // The SNAPSHOT of peer: the SNAPSHOT_DATA body and the memfd of the records. Fails (ezio::Error,
  // the message the client shows) for a job that is not there or not the peer's.
  std::pair<nlohmann::json, UniqueFd> snapshot(const Peer& peer, const nlohmann::json& request);
  // Jobs added and removed while it runs (FLIGHT_ADD, FLIGHT_REMOVE; daemon.cpp lets root only):
  // the FLIGHT_DONE body. Fail (ezio::Error, the message the client shows) for a cgroup that is
  // not there or recorded already, no free session slot, a job that is not there or is Slurm's.
  nlohmann::json add(const nlohmann::json& request);
  nlohmann::json remove(const nlohmann::json& request);
  // The jobs uid may see (root: all), for STATUS.
  nlohmann::json status(uid_t uid) const;
  // The Slurm jobs followed (added, removed, refused, pending), null without --flight-slurm.
  nlohmann::json slurm_status() const;

 private:
  struct Job;
  // Who asked for a job: `--flight` at the start, `--flight-slurm`, or a FLIGHT_ADD.
  enum class Origin { kStart, kSlurm, kRequest };
  struct JobSpec {
    std::string cgroup;          // a path under the mount
    std::optional<uid_t> owner;  // else the cgroup's directory's owner
    Origin origin = Origin::kStart;
    double seconds = 0;  // the job's window and memory (FlightConfig's unless asked)
    uint64_t max_bytes = 0;
  };
  // A Slurm job on its way (flight_slurm.cpp): its user asked for, then its ring being made.
  struct SlurmStart {
    std::string cgroup;  // a path under the mount
    std::string id;      // Slurm's
    uid_t user = 0;
    unsigned slot = RingMaker::kNoSlot;  // its ring being made in this slot (the user known)
    bool gone = false;                   // its cgroup went meanwhile: its ring is removed again
  };
  // A slot whose ring the ring maker made.
  struct MadeRing {
    unsigned slot;
    RingSet rings;
  };
  Job* find(const std::string& id);
  JobSpec spec(const std::string& cgroup, Origin origin) const;
  // The job of spec.cgroup, in made's slot when its ring is made already (a Slurm job's: given
  // back should the job not open). Fails (ezio::Error) when it cannot be recorded, leaving no
  // trace.
  Job& open_job(const JobSpec& spec, std::optional<MadeRing> made = std::nullopt);
  MadeRing make_ring();  // on the loop: --flight's jobs, FLIGHT_ADD's
  void start_slurm();
  // SlurmWatch's actions, on a path under the mount.
  std::string add_slurm_job(const std::string& cgroup);  // "" begun, else why not
  void cancel_slurm_job(const std::string& cgroup);
  void on_user(const SlurmUserLookups::Answer& answer);
  void on_slurm_ring(SlurmStart& start, RingMaker::Done& d);
  // The start of cgroup's Slurm job is over: recorded (why empty), or refused (why logged).
  void settle(std::string cgroup, const std::string& why);
  void remove_job(const std::string& path);
  size_t enroll_present(Job& job, const std::filesystem::path& dir);
  void drain(Job& job);
  void arm_timer();

  SessionKernel& kernel_;
  FlightConfig config_;
  std::filesystem::path mount_;
  std::vector<std::unique_ptr<Job>> jobs_;
  std::unique_ptr<SlurmWatch> slurm_;
  std::unique_ptr<SlurmUserLookups> lookups_;
  std::vector<SlurmStart> starts_;
  RingMaker* maker_ = nullptr;  // from start()
  UniqueFd timer_;
  bool timer_armed_ = false;
  unsigned ticks_ = 0;
};

}  // namespace ezio::recorder::service
