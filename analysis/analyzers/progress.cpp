// SPDX-License-Identifier: GPL-2.0-only
#include "analysis/analyzers/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

namespace ezio::analysis {

Progress::Progress() : enabled_(isatty(STDERR_FILENO) == 1), start_(Clock::now()), last_(start_) {}

Progress::~Progress() {
  if (shown_) std::fputs("\r\033[K", stderr);
}

void Progress::update(const otf2::ReadProgress& p) {
  if (!enabled_) return;
  auto now = Clock::now();
  if (now - start_ < std::chrono::seconds(1) || now - last_ < std::chrono::milliseconds(200)) {
    return;
  }
  last_ = now;
  shown_ = true;
  double secs = std::chrono::duration<double>(now - start_).count();
  std::string pct;
  // Declared event counts can be wrong (EZTrace): show a percentage only while it is plausible.
  if (p.declared_events >= p.events && p.declared_events > 0) {
    pct = fmt::format("{:.0f}%, ", 100.0 * static_cast<double>(p.events) /
                                       static_cast<double>(p.declared_events));
  }
  fmt::print(stderr,
             "\r\033[Keziotrace: reading events: {}{:.1f} M events, location {}/{}, {:.0f} s", pct,
             static_cast<double>(p.events) / 1e6, p.locations_done, p.locations, secs);
  std::fflush(stderr);
}

}  // namespace ezio::analysis
