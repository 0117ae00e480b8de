// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// `eziotrace check TRACE`: is the archive's time consistent? Per host, the stack's containment
// (analysis/model/nesting.h: a kernel call inside a user call of a layer above it, never the other
// way round) and the host's clock map as merge-hosts wrote it; per pair of hosts, the MPI messages
// received before they were sent (analysis/model/messages.h). An archive of several hosts whose
// clocks were aligned wrongly fails it; one host's archive checks its nesting and its messages.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/analyzers/options.h"
#include "analysis/analyzers/table.h"
#include "analysis/model/messages.h"

namespace ezio::analysis {

struct HostCheck {
  std::string host;
  // Its clock map (EZIOTRACE::CLOCK_*, written by merge-hosts); nullopt on a one-host archive.
  std::optional<int64_t> offset_start_ns, offset_end_ns;
  std::optional<uint64_t> error_ns;
  std::optional<uint64_t> alignment_violations;  // EZIOTRACE::ALIGNMENT_VIOLATIONS of its merge
  uint64_t calls_checked = 0, inversions = 0;    // nesting
};

struct CheckResult {
  std::vector<HostCheck> hosts;
  MessageSummary messages;
  std::vector<std::string> inversion_details;  // the first few
  uint64_t inversions() const;
  // Inversions + messages received before they were sent + the merges' alignment violations.
  uint64_t violations() const;
};

CheckResult check_archive(const std::filesystem::path& trace);
Report check_report(const CheckResult& r);
// One line per host and pair of hosts, for merge-hosts to print after merging.
std::vector<std::string> check_summary(const CheckResult& r);

}  // namespace ezio::analysis
