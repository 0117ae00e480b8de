// SPDX-License-Identifier: GPL-2.0-only
#include "analysis/analyzers/options.h"

#include "common/error.h"

namespace ezio::analysis {

bool Filters::location_selected(const Definitions& defs, OTF2_LocationRef loc) const {
  if (threads.empty()) return true;
  const LocationDef* def = defs.location(loc);
  std::string id = std::to_string(loc);
  std::string tid;
  if (auto it = defs.location_tids.find(loc); it != defs.location_tids.end()) {
    tid = std::to_string(it->second);
  }
  for (auto& t : threads) {
    if (t == id || (!tid.empty() && t == tid)) return true;
    if (def && def->name.find(t) != std::string::npos) return true;
  }
  return false;
}

bool Filters::layer_selected(Layer l) const {
  if (layers.empty()) return true;
  for (auto& s : layers) {
    if (parse_layer(s) == l) return true;
  }
  return false;
}

bool Filters::region_selected(const RegionInfo& r) const {
  if (regions.empty()) return true;
  for (auto& s : regions) {
    if (r.canonical.find(s) != std::string::npos || r.name.find(s) != std::string::npos) {
      return true;
    }
  }
  return false;
}

void Filters::validate() const {
  for (auto& s : layers) {
    if (!parse_layer(s)) {
      fail("unknown layer '{}' (expected hdf5, mpiio, user, syscall, vfs, fs, pagecache or block)",
           s);
    }
  }
}

}  // namespace ezio::analysis
