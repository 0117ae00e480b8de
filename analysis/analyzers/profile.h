// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// `eziotrace profile`: per thread and in total, per region: inclusive/exclusive time, share of the
// runtime, count, min/max/average and the interference score SCI (docs/analysis.md).
#include "analysis/analyzers/options.h"
#include "analysis/analyzers/table.h"

namespace ezio::analysis {

struct ProfileOptions {
  CommonOptions common;
  bool total_only = false;
};

Report run_profile(const ProfileOptions& o);

}  // namespace ezio::analysis
