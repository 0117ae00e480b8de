// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// eziotraced's thread for the slow part of opening a session (SessionKernel::make_rings: the ring
// buffers' memory and the kernel's RCU grace periods; docs/costs.md), so that the daemon's loop,
// the only thread that answers clients, never waits for it: no client waits behind another's
// session, nor behind a Slurm job's start (flight_slurm.cpp). The loop owns the slots (reserved
// before a job, opened or given back after it); this thread only makes and installs, or removes,
// the rings of the slot it is given.
#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/unique_fd.h"
#include "recorder/load/ring_buffers.h"

namespace ezio::recorder::service {

class SessionKernel;

class RingMaker {
 public:
  static constexpr unsigned kNoSlot = ~0u;
  struct Job {
    unsigned slot = kNoSlot;
    uint64_t ring_bytes = 0;  // the session's total; 0: remove the slot's rings (nobody took them)
    bool spare = false;       // made in advance, at low priority: nobody waits for it yet
    bool per_cpu = true;      // one ring per CPU (a recording's), else one (a flight job's)
  };
  struct Done {
    Job job;
    RingSet rings;      // the installed rings (none for a removal, or on failure)
    std::string error;  // why it failed, "" when it did not
  };
  explicit RingMaker(SessionKernel& kernel);
  ~RingMaker();  // finishes the job under way, drops the others
  RingMaker(const RingMaker&) = delete;
  RingMaker& operator=(const RingMaker&) = delete;

  void request(const Job& job);
  // A client waits for the spare being made in `slot`: it is made at normal priority from now on.
  void hurry(unsigned slot);
  // Readable while finished jobs wait to be taken (an eventfd, for the loop's epoll set).
  int ready_fd() const { return ready_.get(); }
  std::vector<Done> take();

 private:
  void run();
  Done work(const Job& job);
  void set_nice(int nice);

  SessionKernel& kernel_;
  UniqueFd ready_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Job> jobs_;
  std::vector<Done> done_;
  bool stopping_ = false;
  Job current_;                 // the job under way, kNoSlot: none (guarded by mutex_)
  std::atomic<pid_t> tid_ = 0;  // the thread's, for its priority
  std::thread thread_;
};

}  // namespace ezio::recorder::service
