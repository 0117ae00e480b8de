// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Draws latency histograms as a self-contained SVG document (text, no library).
#include <string>
#include <vector>

#include "analysis/analyzers/histogram.h"

namespace ezio::analysis {

struct HistogramPanel {
  std::string title;  // "Syscall write (1234 calls)"
  Log2Histogram histogram;
};

std::string histograms_svg(const std::string& title, const std::vector<HistogramPanel>& panels);

// Text and attribute values for XML/HTML: & < > " escaped.
std::string xml_escape(const std::string& s);

// "1 us", "512 ns", "2 s": the lower bound of a log2 nanosecond bucket.
std::string ns_label(uint64_t ns);

}  // namespace ezio::analysis
