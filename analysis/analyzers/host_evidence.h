// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The report's hosts section (docs/cluster.md): for an archive of several hosts (merge-hosts),
// one row per host with what its part recorded (processes, ranks, bytes per layer, block
// requests, devices) and what its part said about itself (loss counters, kernel release, clock
// map, Slurm ids: the properties of its system-tree node). Memory: per host, per process.
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "analysis/model/calls.h"

namespace ezio::analysis {

struct HostEvidence {
  std::string name;
  std::set<std::string> processes;  // those that made I/O calls counted as the application's
  std::set<std::string> ranks;      // of them, those EZTrace traced (user-level calls)
  std::array<std::array<uint64_t, 2>, kLayerCount> bytes{};  // [layer][read, written]
  uint64_t block_requests = 0;
  // Its devices' requests between its recording sessions, while none was open (merge-hosts'
  // EZIOTRACE::OUTSIDE_WINDOWS::<dev>, summed): nullopt when its node has no such property.
  std::optional<uint64_t> outside_windows;
  std::set<std::string> devices;
  std::map<std::string, uint64_t> lost;  // per layer
  std::string kernel;
  std::optional<int64_t> clock_offset_ns;  // the reference's clock minus the host's, at start
  std::optional<uint64_t> clock_error_ns;
  std::string slurm_job, slurm_step;  // "" when the part has none
};

class HostTally {
 public:
  explicit HostTally(const Definitions& defs);
  void begin_location(OTF2_LocationRef loc);
  // An I/O call counted as the application's.
  void add(const Call& c);
  // One entry per host, in the archive's order; empty for an archive of one host.
  std::vector<HostEvidence> finish();

 private:
  const Definitions& defs_;
  std::map<std::string, HostEvidence> hosts_;
  HostEvidence* current_ = nullptr;
  std::string process_;
  bool device_ = false;
  std::string location_name_;
};

}  // namespace ezio::analysis
