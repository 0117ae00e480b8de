// SPDX-License-Identifier: GPL-2.0-only
#include "analysis/model/nesting.h"

#include <fmt/format.h>

namespace ezio::analysis {
namespace {
constexpr size_t kMaxDetails = 10;
}  // namespace

void NestingCheck::end_location() {
  for (const Open& o : open_) ++outermost[static_cast<size_t>(o.layer)];
  open_.clear();
}

void NestingCheck::add(const Call& c, bool io) {
  if (!io) {
    // Its I/O children stay open for the I/O call around it; with none around, they are the
    // outermost I/O calls.
    if (c.depth == 0) end_location();
    return;
  }
  // Calls are delivered innermost first: every open call deeper than this one lies inside it.
  while (!open_.empty() && open_.back().depth > c.depth) {
    Layer inner = open_.back().layer;
    open_.pop_back();
    ++inside[static_cast<size_t>(c.info->layer)][static_cast<size_t>(inner)];
    if (may_nest(c.info->layer, inner)) continue;
    ++inversions;
    if (inversion_details.size() < kMaxDetails) {
      inversion_details.push_back(fmt::format("location {}: a {} call inside {} ({} layer) at {}",
                                              c.location, layer_title(inner), c.info->name,
                                              layer_title(c.info->layer), c.start));
    }
  }
  if (c.depth == 0) {
    ++outermost[static_cast<size_t>(c.info->layer)];
  } else {
    open_.push_back({c.depth, c.info->layer});
  }
}

}  // namespace ezio::analysis
