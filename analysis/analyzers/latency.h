// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// `eziotrace latency`: log2 latency histograms per layer and operation, as terminal bars, tables
// and an SVG picture (--svg FILE).
#include "analysis/analyzers/options.h"
#include "analysis/analyzers/table.h"

namespace ezio::analysis {

struct LatencyOptions {
  CommonOptions common;
  std::string svg;  // write the picture here when not empty
};

Report run_latency(const LatencyOptions& o);

}  // namespace ezio::analysis
