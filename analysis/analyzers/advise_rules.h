// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The rules of `eziotrace advise` as data: each rule is a name, the thresholds it reads (with their
// defaults, docs/analysis.md) and a small function over the evidence. advise() evaluates them in
// table order; a new rule is one function and one row.
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/analyzers/advise.h"

namespace ezio::analysis {

// What a rule sees and what it may say.
class RuleContext {
 public:
  RuleContext(const Evidence& ev, const Thresholds& t, std::span<const FileEvidence* const> files,
              std::string_view rule, Advice& out)
      : ev(ev), t(t), files(files), rule_(rule), out_(out) {}

  const Evidence& ev;
  const Thresholds& t;
  // The application's files (file_origin()): the loader's, the system's and inherited descriptors
  // are not the application's I/O pattern, and no rule looks at them.
  std::span<const FileEvidence* const> files;

  // A new finding of this rule, to be filled in by the caller (valid until the next add()).
  Finding& add(Level level, std::string title);
  // The rule could not be evaluated on this trace, and why.
  void not_observed(std::string why);

 private:
  std::string_view rule_;
  Advice& out_;
};

struct ThresholdDef {
  std::string_view name;
  double value;
};

struct Rule {
  std::string_view name;
  std::vector<ThresholdDef> thresholds;  // those the rule reads, with their defaults
  void (*check)(RuleContext&);
};

// Every rule, in the order advise() evaluates them.
std::span<const Rule> advise_rules();

// The rules' functions: the recording (advise_rules_recording.cpp), the application's accesses
// (advise_rules_access.cpp) and what the kernel did with them (advise_rules_kernel.cpp).
void rule_lost_events(RuleContext& c);
void rule_incomplete_recording(RuleContext& c);
void rule_small_requests(RuleContext& c);
void rule_random_access(RuleContext& c);
void rule_read_modify_write(RuleContext& c);
void rule_metadata_storm(RuleContext& c);
void rule_useless_buffering(RuleContext& c);
void rule_reopened_files(RuleContext& c);
void rule_sync_cost(RuleContext& c);
void rule_cache_read_misses(RuleContext& c);
void rule_readahead_waste(RuleContext& c);
void rule_dirty_throttling(RuleContext& c);
void rule_device_saturated(RuleContext& c);
void rule_thread_interference(RuleContext& c);
// MPI-IO (advise_rules_mpiio.cpp) and HDF5 (advise_rules_hdf5.cpp).
void rule_mpiio_small_independent(RuleContext& c);
void rule_collective_small_requests(RuleContext& c);
void rule_shared_file_pointer(RuleContext& c);
void rule_hdf5_small_writes(RuleContext& c);
void rule_hdf5_small_chunks(RuleContext& c);
void rule_hdf5_metadata(RuleContext& c);

// Helpers shared by the rules.
inline double share(double part, double total) { return total > 0 ? part / total : 0.0; }
std::string pct(double fraction);  // "12.5 %"
bool layer_observed(const Evidence& ev, Layer l);
// The application's own layer: the syscalls, or EZTrace's calls in a user-level archive.
Layer app_layer(const Evidence& ev);
// The application's files with the largest non-zero `get`, as "path (n)".
std::vector<std::string> top_files(const RuleContext& c, uint64_t (*get)(const FileEvidence&),
                                   size_t n = 5);

}  // namespace ezio::analysis
