// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Sequential or random: where the next implicit-offset access of an open file starts, and where its
// last access ended (docs/analysis.md, `files`). Shared by `files` and the report's evidence.
#include <cstdint>

#include "analysis/model/calls.h"

namespace ezio::analysis {

class AccessPosition {
 public:
  // Records the access `c` (a read/write that carried the I/O events) and says whether it started
  // where the previous access of the same open file ended (the first: at offset 0).
  bool sequential(const Call& c) {
    uint64_t start = c.has_offset ? c.offset : position_;
    bool seq = accessed_ ? start == last_end_ : start == 0;
    accessed_ = true;
    last_end_ = start + c.bytes;
    if (!c.has_offset) position_ = last_end_;
    return seq;
  }
  // The start offset `c` will be given (before sequential() advances the position).
  uint64_t start_of(const Call& c) const { return c.has_offset ? c.offset : position_; }
  void seek(uint64_t offset) { position_ = offset; }

 private:
  uint64_t position_ = 0;
  uint64_t last_end_ = 0;
  bool accessed_ = false;
};

}  // namespace ezio::analysis
