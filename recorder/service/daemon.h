// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// eziotraced's loop: one thread, one epoll set; every connection is a small state machine
// (protocol.h) over a session of the loaded programs.
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/unique_fd.h"
#include "recorder/load/ring_buffers.h"
#include "recorder/service/limits.h"
#include "recorder/service/peer.h"
#include "recorder/service/protocol.h"
#include "recorder/service/ring_maker.h"

namespace ezio::recorder::service {

// The loaded programs as the daemon uses them (kernel_sessions.h adapts KernelPrograms).
class SessionKernel {
 public:
  virtual ~SessionKernel() = default;
  struct Opened {
    unsigned slot = 0;
    // Records written on CPU c are in rings[c % rings.size()] (bpf/common.bpf.h, ring_entry).
    std::vector<UniqueFd> rings;
    uint64_t ring_bytes = 0;  // each ring's
  };
  // Opening a session, in steps: reserve() holds a free slot (ezio::Error when every slot is
  // taken); make_rings() makes its ring buffers (one per CPU, total_bytes in all, as the
  // in-process recorder's: ring_layout, recorder/load/ring_buffers.h; one of total_bytes when
  // !per_cpu) and installs them in the map of rings, the slow step (their memory, the kernel's
  // RCU grace period) and the only thread-safe one, with remove_ring() (which undoes it); open()
  // opens the session; unreserve() gives back a slot not opened.
  virtual unsigned reserve() = 0;
  virtual RingSet make_rings(unsigned slot, uint64_t total_bytes, bool per_cpu = true) = 0;
  virtual void remove_ring(unsigned slot) = 0;
  virtual Opened open(unsigned slot, RingSet rings) = 0;
  virtual void unreserve(unsigned slot) = 0;
  // The layers the slot's session records: bit 1 << EZIO_LAYER_x (bpf/record.h).
  virtual void set_layers(unsigned slot, uint32_t mask) = 0;
  virtual void trace(unsigned slot, pid_t pid) = 0;
  virtual size_t traced(unsigned slot) const = 0;
  // Nothing more enters the slot's ring once this returns (the kernel's RCU grace period: no
  // program is still writing into it), then its totals (totals_json.h): what the client drains
  // after it is all there is, and every loss is counted.
  virtual nlohmann::json end(unsigned slot) = 0;
  virtual void close(unsigned slot) = 0;
  // Hooks the programs (returns once they are; a detach under way is waited for first), or starts
  // unhooking them (returns at once). Attached while a session needs them only: attached, the
  // programs run in every process's system calls, recorded or not.
  virtual void attach() = 0;
  virtual void detach() = 0;
  // The flight recorder (flight_recorder.h): the processes of uid entering the cgroup (at level:
  // its depth below the root) or one below it join the slot's session; pid, running, joins it now
  // (false when another session records it, or it ended); the session's losses so far, per layer.
  virtual void record_cgroup(unsigned slot, uint64_t cgroup_id, unsigned level, uint32_t uid);
  virtual bool enroll(unsigned slot, pid_t pid);
  virtual std::vector<uint64_t> lost(unsigned slot) const;
  // What a client needs to know of the programs, as a JSON object's text (made once: every HELLO
  // is answered with it): {"plan": probe plan JSON, "kernel_release"}.
  virtual const std::string& facts() const = 0;
};

struct DaemonConfig {
  gid_t group = 0;  // whose members may record (besides root)
  Limits limits;
  uint64_t spare_ring_bytes = 32ull << 20;  // eziotrace record's default --ring-buffer; 0: none
  // How the always-on metrics count system calls (fentry, tracepoint), "" without metrics: shown
  // by `service status`.
  std::string metrics_hook;
};

class FlightRecorder;

class Daemon {
 public:
  Daemon(SessionKernel& kernel, const DaemonConfig& config);
  // The flight recorder to serve snapshots of and drain (flight_recorder.h), before run().
  void set_flight(FlightRecorder* flight) { flight_ = flight; }
  ~Daemon();
  // Serves listen_fd until SIGTERM or SIGINT (blocked by the caller; taken through a signalfd).
  void run(int listen_fd);

 private:
  struct Connection;
  void accept_one(int listen_fd);
  // Handles the connection's next message, or `deferred`, one received earlier.
  void serve(int fd, std::optional<Message> deferred = std::nullopt);
  void handle(Connection& c, Message& m);
  void on_hello(Connection& c, Message& m);
  void welcome(Connection& c, SessionKernel::Opened s);
  void on_rings_ready();
  void on_ring_made(RingMaker::Done& d);
  void on_trace(Connection& c, Message& m);
  void on_status(Connection& c);
  void on_snapshot(Connection& c, Message& m);
  void on_flight_change(Connection& c, Message& m);
  void drop(int fd, const std::string& why);
  void log_sessions() const;
  bool any_session() const;  // of a client (the spare is none)
  bool spare_wanted() const;
  void refill_spare();

  SessionKernel& kernel_;
  DaemonConfig config_;
  Quota quota_;
  UniqueFd epoll_;
  std::map<int, std::unique_ptr<Connection>> connections_;
  // Makes the sessions' rings apart from the loop (ring_maker.h); made in run() (the daemon may
  // fork before it, and the thread must not take the signals).
  std::unique_ptr<RingMaker> maker_;
  // A session opened in advance, with the ring size clients ask for by default: opening one (the
  // ring's memory, and the kernel's RCU grace period when the ring joins the programs' ring
  // table; docs/costs.md) would otherwise delay the application's start.
  std::optional<SessionKernel::Opened> spare_;
  unsigned making_spare_ = RingMaker::kNoSlot;  // the slot of the spare being made, if any
  FlightRecorder* flight_ = nullptr;
  bool spare_failed_ = false;  // no free slot (or no memory) last time: wait for a session to close
};

}  // namespace ezio::recorder::service
