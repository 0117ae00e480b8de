// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// What is known about a recording besides its events: clock, losses, how it ended.
#include <sys/types.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "record.h"

namespace ezio::recorder {

// What a flight recorder's snapshot holds (eziotrace snapshot, docs/flight-recorder.md).
struct SnapshotWindow {
  std::string job;              // the cgroup path
  uint64_t asked_start_ns = 0;  // CLOCK_MONOTONIC
  uint64_t start_ns = 0;        // later than asked when events were dropped to make room
  uint64_t end_ns = 0;
  uint64_t dropped = 0;  // events the service dropped to make room since the job began
  std::string rule;      // the eziotraced rule that took it; empty when someone asked for it
};

// A process whose fork and exec came before the snapshot's window: its name from the service.
struct NamedProcess {
  uint32_t pid = 0, ppid = 0;
  std::string comm, exe;
};

struct RecordingInfo {
  uint64_t start_monotonic_ns = 0;  // read just before the application is released
  uint64_t start_realtime_ns = 0;   // read at the same instant
  uint64_t end_monotonic_ns = 0;
  std::array<uint64_t, EZIO_LAYER_COUNT> lost{};
  std::vector<uint64_t> lost_per_cpu;                // every layer's, by CPU (empty: not known)
  unsigned rings = 1;                                // the session's ring buffers
  uint64_t ring_bytes = 0;                           // each one's (0: not known)
  std::array<std::string, EZIO_LAYER_COUNT> probes;  // hook used per layer ("" = not recorded)
  std::string status = "complete";                   // or "interrupted", "application-crashed"
  std::string status_reason;        // "interrupted": why (the signal, the service gone); else ""
  std::string application_end;      // "exit status 0", "killed by SIGSEGV"
  uint64_t application_cpu_ns = 0;  // its CPU time and its waited children's
  pid_t root_pid = 0;
  size_t still_running = 0;  // traced processes alive when recording stopped
  std::vector<std::string> command;
  std::vector<std::string> user_command;   // as typed, when `command` rewrote it; else empty
  std::string cwd;                         // working directory of the launched application
  std::array<std::string, 3> stdio_paths;  // what fds 0, 1, 2 of the application pointed to
  std::string hostname;
  std::string kernel_release;  // uname -r of the recording machine
  std::string recording_path;  // KernelSource::path_name(): "in-process" or "eziotraced"
  std::optional<SnapshotWindow> snapshot;     // a snapshot's window (status "snapshot")
  std::vector<NamedProcess> named_processes;  // processes named before their first record
};

const char* layer_name(unsigned layer);
uint64_t monotonic_ns();
uint64_t realtime_ns();

}  // namespace ezio::recorder
