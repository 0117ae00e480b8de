// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The users of new Slurm jobs (--flight-slurm, docs/flight-recorder.md), asked from scontrol
// without waiting for it: each `scontrol show job -o ID` runs as a child whose output is a pipe
// and whose end is a pidfd, both in an epoll set of their own whose fd the service's loop watches.
// slurmctld may take seconds to answer, or never: the loop answers its clients meanwhile. At most
// kMaxChildren run at once (a burst of new jobs must not fork a burst of scontrols onto a slow
// slurmctld); the others wait their turn. A lookup not answered within the timeout from its start()
// (waiting included) is killed or taken out of the queue, and its job has no user.
#include <sys/types.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/unique_fd.h"

namespace ezio::recorder::service {

class SlurmUserLookups {
 public:
  static constexpr size_t kMaxChildren = 8;
  struct Answer {
    std::string id;            // the Slurm job's
    std::optional<uid_t> uid;  // its user; nothing when scontrol failed, did not say or timed out
    std::string why;           // why there is no uid (scontrol's words, or the timeout's)
  };
  // scontrol: the program, a path or a name looked for in PATH; timeout_ns: how long one lookup
  // may take. Fails (ezio::Error) without an epoll set.
  SlurmUserLookups(std::string scontrol, uint64_t timeout_ns);
  ~SlurmUserLookups();  // the children still running are killed and reaped
  SlurmUserLookups(const SlurmUserLookups&) = delete;
  SlurmUserLookups& operator=(const SlurmUserLookups&) = delete;

  // Readable when a child wrote or ended: on_ready() then.
  int fd() const { return epoll_.get(); }
  // Asks for job id's user from now_ns (CLOCK_MONOTONIC): scontrol runs now, or once fewer than
  // kMaxChildren do. Fails (ezio::Error) when scontrol cannot be run now.
  void start(const std::string& id, uint64_t now_ns);
  // The job went: its child is killed or its turn taken away, its answer never given.
  void cancel(const std::string& id);
  // Reads what the children wrote; the answers of those that ended (each child reaped), and of
  // those waiting that could not run once their turn came.
  std::vector<Answer> on_ready();
  // The lookups begun more than the timeout before now_ns: their children killed or their turn
  // taken away, no user.
  std::vector<Answer> expire(uint64_t now_ns);
  // The children not reaped yet, those killed included (for the tests: none is left behind).
  size_t children() const { return children_.size(); }
  // The lookups waiting for their turn.
  size_t waiting() const { return waiting_.size(); }

 private:
  // A child killed (timed out, cancelled) stays until its pidfd says it ended: then reaped.
  class Child;
  struct Waiting {
    std::string id;
    uint64_t deadline_ns;
  };
  // Runs the waiting lookups while there is room; those that cannot run are answered.
  void run_waiting(std::vector<Answer>& answers);

  std::string scontrol_;
  uint64_t timeout_ns_;
  UniqueFd epoll_;
  std::vector<std::unique_ptr<Child>> children_;
  std::deque<Waiting> waiting_;
};

}  // namespace ezio::recorder::service
