// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// A one-line progress indicator on stderr, shown only when stderr is a terminal and only once
// reading has taken more than a second, so that quick runs and scripts see nothing.
#include <chrono>

#include "common/otf2/reader.h"

namespace ezio::analysis {

class Progress {
 public:
  Progress();
  ~Progress();  // clears the line
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  void update(const otf2::ReadProgress& p);

 private:
  using Clock = std::chrono::steady_clock;
  bool enabled_;
  bool shown_ = false;
  Clock::time_point start_, last_;
};

}  // namespace ezio::analysis
