// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// What record() (recorder/session/record.cpp) needs from the kernel. The same loop writes the same
// archive whether the programs were loaded in-process (root: InProcessSource, in_process_source.h)
// or are held by eziotraced (a user's session: ServiceSource, recorder/service/).
#include <sys/types.h>

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "record.h"
#include "recorder/core/device_use.h"

namespace ezio::recorder {

struct ProbePlan;

// Sessions the loaded programs serve at once (bpf/record.h). Slot 0 is the in-process recorder's
// when it loads the programs itself.
constexpr unsigned kMaxSessions = EZIO_MAX_SESSIONS;

// What the kernel tables hold for one session at its end.
struct SessionTotals {
  std::array<uint64_t, EZIO_LAYER_COUNT>
      lost{};         // drops of this session (and of no session, during it)
  DeviceUse devices;  // used: this session's target_devs; unattributed: every device's
  std::map<uint32_t, ezio_reclaimed> reclaimed;  // per TID, of this session's threads
  // This session's drops (every layer) per CPU they were counted on; empty: not known (eziotraced).
  std::vector<uint64_t> lost_per_cpu;
  unsigned rings = 1;       // the session's ring buffers
  uint64_t ring_bytes = 0;  // each one's (0: not known)
};

// The application's process, started and waiting before its exec when the kernel side is opened
// (pid -1: none yet): eziotraced is asked to trace it in the same exchange as the session's
// opening. trace_process() is still called for it.
struct FirstProcess {
  pid_t pid = -1;
  int pidfd = -1;
};

class KernelSource {
 public:
  virtual ~KernelSource() = default;
  virtual const ProbePlan& plan() const = 0;
  // pid (stopped before its exec) joins the session's tree, recorded from its execve on. The
  // service checks the child through its pidfd; in-process, pidfd is not needed (-1 is fine).
  virtual void trace_process(pid_t pid, int pidfd) = 0;
  // Whether trace_running_process() works: the programs loaded here can, eziotraced's sessions
  // take stopped children only.
  virtual bool traces_running_processes() const { return false; }
  // pid, which exec'd its program before the programs filtered on it (held at the preload helper's
  // gate, recorder/session/start_gate.h), joins the session's tree: recorded from now on.
  virtual void trace_running_process(pid_t /*pid*/, int /*pidfd*/) {}
  // Waits up to timeout_ms for records (or a wake_on fd), then drains; returns drain()'s answer.
  virtual bool poll(int timeout_ms) = 0;
  // Hands the ring's records to the sink until it is empty (true) or the sink is full (false:
  // RecordStore::full(), the rest waits in the ring).
  virtual bool drain() = 0;
  virtual void wake_on(int fd) = 0;
  virtual void unwatch(int fd) = 0;
  // Processes of the session's tree still alive (the kernel forgets one when its last thread
  // exits).
  virtual size_t traced_processes() const = 0;
  // Stops recording (nothing more enters the ring) and returns the session's totals; the ring
  // stays drainable afterwards.
  virtual SessionTotals stop() = 0;
  // "in-process" or "eziotraced" (written to the archive as EZIOTRACE::RECORDING_PATH).
  virtual std::string path_name() const = 0;
  // Whether destroying the source is long (the programs unhooked: mostly waits for the kernel),
  // so that it is done at the lowest priority while the archive is finished.
  virtual bool slow_teardown() const { return false; }
  // Why the source stopped recording by itself (eziotraced went away), "" if it did not: the
  // archive is then marked interrupted.
  virtual std::string interrupted() const { return ""; }
};

}  // namespace ezio::recorder
