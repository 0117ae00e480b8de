// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The users of new Slurm jobs (--flight-slurm, docs/flight-recorder.md), asked from scontrol
// without waiting for it: each `scontrol show job -o ID` runs as a child whose output is a pipe
// and whose end is a pidfd, both in an epoll set of their own whose fd the service's loop watches.
// slurmctld may take seconds to answer, or never: the loop answers its clients meanwhile. A child
// still running after the timeout is killed and its job has no user.
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/unique_fd.h"

namespace ezio::recorder::service {

class SlurmUserLookups {
 public:
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
  // Asks for job id's user from now_ns (CLOCK_MONOTONIC). Fails (ezio::Error) when scontrol
  // cannot be run.
  void start(const std::string& id, uint64_t now_ns);
  // The job went: its child is killed, its answer never given.
  void cancel(const std::string& id);
  // Reads what the children wrote; the answers of those that ended (each child reaped).
  std::vector<Answer> on_ready();
  // The lookups begun more than the timeout before now_ns: their children killed, no user.
  std::vector<Answer> expire(uint64_t now_ns);
  // The children not reaped yet, those killed included (for the tests: none is left behind).
  size_t children() const { return children_.size(); }

 private:
  // A child killed (timed out, cancelled) stays until its pidfd says it ended: then reaped.
  class Child;

  std::string scontrol_;
  uint64_t timeout_ns_;
  UniqueFd epoll_;
  std::vector<std::unique_ptr<Child>> children_;
};

}  // namespace ezio::recorder::service
