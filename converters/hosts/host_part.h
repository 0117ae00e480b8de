// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// One host's part of a multi-host recording, as `eziotrace merge-hosts` takes it: a complete
// eziotrace archive (kernel-only or merged) and, beside it, the eziotrace-clock.json that
// `record --clock-ref` wrote, which maps the host's CLOCK_MONOTONIC onto the reference host's
// (docs/cluster.md, "One archive from per-host archives").
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "recorder/core/clock_sync.h"

namespace ezio::converters {

struct HostPart {
  std::filesystem::path given;   // as named on the command line
  std::filesystem::path anchor;  // its .otf2 file, once found
  std::string host;              // from the clock file, else the archive's system tree node
  std::string reference;         // the clock file's reference host ("" without a clock file)
  std::optional<recorder::ClockMap> clock;  // nullopt: the reference itself (identity)
  std::string end_missing;                  // why the clock file has no end measurement
  std::string problem;                      // non-empty: the part is not merged, and why
  std::string incomplete;  // non-empty: merged, but its recording is not whole, and why
};

// Finds each part's archive and clock file and checks they fit together: one reference for all
// parts; a part without a clock file only when it is that reference's host (its clock is the
// timeline). Never throws for one part: what is wrong with it is its `problem`.
std::vector<HostPart> load_host_parts(const std::vector<std::filesystem::path>& given);

// The part's time on the reference's timeline.
inline uint64_t reference_time(const HostPart& p, uint64_t t) {
  return p.clock ? uint64_t(p.clock->server_time(int64_t(t))) : t;
}

}  // namespace ezio::converters
