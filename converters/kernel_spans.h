#pragma once
// A kernel thread's events cut into top-level spans (a syscall's ENTER ... LEAVE with everything
// nested in it), the unit the merge moves around, filters and checks.
#include <cstdint>
#include <string>
#include <vector>

#include "converters/archive_model.h"

namespace ezio::converters {

struct Span {
  size_t begin = 0, end = 0;  // [begin, end) in the location's events
  uint64_t t0 = 0, t1 = 0;
  std::string call;  // canonical region name of the outer ENTER ("syscall:write"), "" if none
  bool dropped = false;
};

std::vector<Span> cut_spans(const Definitions& defs, const std::vector<Event>& events);

}  // namespace ezio::converters
