// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Starts the application stopped before execve, so that the BPF programs are already filtering on
// its pid when its first instruction runs; or, gated, exec'd at once with its program's own code
// held at the preload helper's gate (recorder/session/start_gate.h) until open_gate().
#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "common/unique_fd.h"
#include "recorder/session/privileges.h"

namespace ezio::recorder {

class Launcher {
 public:
  // kHeld: the child waits before its exec for release(). kGated: it execs at once, with the gate's
  // pipe ends (EZIOTRACE_GATE=<read fd>,<write fd>,<our pid> in its environment) for the preload
  // helper.
  enum class Start { kHeld, kGated };
  // Forks; the child takes the target user's identity and waits for release() (kHeld).
  // env: the complete environment of the application ("NAME=value").
  Launcher(const std::vector<std::string>& argv, const std::vector<std::string>& env,
           const TargetUser& user, Start start = Start::kHeld);
  ~Launcher();
  Launcher(const Launcher&) = delete;
  Launcher& operator=(const Launcher&) = delete;

  pid_t pid() const { return pid_; }
  // Lets the child exec. If the exec fails, throws ezio::Error with exit status 127 (not found) or
  // 126 (not executable), as shells do.
  void release();
  // kGated: waits for the exec's outcome, and fails as release() does when it failed.
  void confirm_exec();
  // kGated: lets the program's own code run (it may not have reached the gate yet).
  void open_gate();
  // kGated: whether the helper said its program reached the gate (and so ran none of its own code
  // before open_gate()). Does not wait: asked once the application ended, the answer is final.
  bool gate_reached();
  // When it reached the gate (CLOCK_MONOTONIC ns), once gate_reached().
  uint64_t gate_reached_ns() const { return gate_reached_ns_; }
  // The exit status in the form `time` and shells use (128+N for signal N) once the child ended.
  std::optional<int> poll_exit();
  // Readable once the child has ended (a pidfd), so that a wait for records can end with it; -1
  // where the kernel has no pidfd (then the end is seen at the next poll_exit()).
  int exit_fd() const { return exit_fd_.get(); }
  // A short description of how the application ended ("exit status 0", "killed by SIGSEGV").
  const std::string& how_it_ended() const { return ended_; }
  // Killed by a signal that a fault of the program raises: SIGSEGV, SIGBUS, SIGILL, SIGFPE,
  // SIGABRT, SIGSYS or SIGTRAP.
  bool crashed() const { return crashed_; }
  // CPU time (user + system) of the application and of the descendants it waited for, once it
  // ended: unlike wall time, not inflated when a shared host takes the CPU away.
  uint64_t cpu_ns() const { return cpu_ns_; }
  void signal(int sig);

 private:
  std::string name_;
  pid_t pid_ = -1;
  UniqueFd go_fd_;      // write end: one byte releases the child
  UniqueFd error_fd_;   // read end: errno from a failed exec, EOF on success (CLOEXEC)
  UniqueFd gate_fd_;    // kGated, our end of a socket pair: one byte opens the gate
  UniqueFd report_fd_;  // kGated, read end: the helper's byte when its program reached the gate
  bool gate_reached_ = false;
  uint64_t gate_reached_ns_ = 0;
  UniqueFd exit_fd_;
  bool exited_ = false;
  bool crashed_ = false;
  uint64_t cpu_ns_ = 0;
  std::string ended_;
};

// The current environment, as a list, for Launcher.
std::vector<std::string> current_environment();

}  // namespace ezio::recorder
