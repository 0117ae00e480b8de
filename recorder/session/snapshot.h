// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// eziotrace snapshot: a flight-recorded job's last seconds, asked of eziotraced and written as an
// ordinary archive by the user who asked (docs/flight-recorder.md).
#include <cstdint>
#include <filesystem>
#include <string>

#include "recorder/core/recording_info.h"

namespace ezio::recorder {

struct SnapshotOptions {
  std::string job;  // the cgroup path (as eziotraced --flight named it), its id, or Slurm's job id
  double seconds = 0;  // the last seconds wanted; 0: all the service keeps
  std::filesystem::path output;
  bool force = false;
  std::filesystem::path socket;
};

struct SnapshotResult {
  std::filesystem::path archive;  // the anchor's directory
  RecordingInfo info;
  uint64_t events = 0;
};

// Fails (ezio::Error) with the service's refusal: no such job, not the user's, no service.
SnapshotResult take_snapshot(const SnapshotOptions& options);

}  // namespace ezio::recorder
