// SPDX-License-Identifier: GPL-2.0-only
// The rules about the recording itself: whether its figures can be trusted.
#include <fmt/format.h>

#include "analysis/analyzers/advise_rules.h"

namespace ezio::analysis {

void rule_lost_events(RuleContext& c) {
  if (c.ev.lost_total() == 0) return;
  Finding& f = c.add(Level::kHigh, "Events were lost while recording: findings are uncertain");
  std::string parts;
  for (auto& [layer, n] : c.ev.lost) {
    if (n == 0) continue;
    parts += fmt::format("{}{} {}", parts.empty() ? "" : ", ", layer, n);
    f.numbers[layer] = n;
    f.where.push_back(layer + " layer");
  }
  f.evidence = fmt::format("lost events: {}; every count of those layers is a lower bound", parts);
  f.advice =
      "Record again with fewer layers (--layers) or a larger ring buffer, or trace a shorter run; "
      "until then read every finding below as a lower bound.";
  f.section = "header";
}

void rule_incomplete_recording(RuleContext& c) {
  if (c.ev.status.empty() || c.ev.status == "complete") return;
  if (c.ev.status == "snapshot") {
    Finding& f = c.add(Level::kInfo,
                       "The recording is a flight recorder's snapshot of a running job: a window");
    f.evidence = "EZIOTRACE::STATUS = snapshot";
    f.numbers["status"] = c.ev.status;
    f.advice =
        "Calls across the window's edges are left out; take a longer snapshot "
        "(eziotrace snapshot --seconds) or record the job to its end for whole figures.";
    f.section = "header";
    return;
  }
  Finding& f =
      c.add(Level::kWarn, fmt::format("The recording is {}: the trace may end early", c.ev.status));
  f.evidence = fmt::format("EZIOTRACE::STATUS = {}", c.ev.status);
  f.numbers["status"] = c.ev.status;
  f.advice = "Let the application run to its end under eziotrace for complete figures.";
  f.section = "header";
}

}  // namespace ezio::analysis
