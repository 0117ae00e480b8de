// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// What a location's local definition file can hold besides nothing: OTF2's mapping tables (the
// ids its event file uses -> the archive's global ids) and clock offsets (its timestamps -> the
// archive's timeline). OTF2's event reader applies both by default (OTF2_EvtReader_Apply*), so
// an archive can take event files written elsewhere unchanged (merge-hosts' assembly).
#include <otf2/otf2.h>

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

namespace ezio::otf2 {

struct LocalDefinitions {
  // Per mapping type, the (local, global) pairs that differ: OTF2 keeps an id its sparse map
  // lacks as it is.
  std::map<OTF2_MappingType, std::vector<std::pair<uint64_t, uint64_t>>> mappings;
  struct ClockOffset {
    uint64_t time;   // in the location's own clock
    int64_t offset;  // global time - own time, at `time`
    double stddev;   // the offset's error
  };
  // OTF2 interpolates linearly between consecutive offsets and extrapolates the last interval;
  // a single offset makes no interval and is ignored, so a constant shift needs two.
  std::vector<ClockOffset> clock_offsets;

  void map(OTF2_MappingType type, uint64_t local, uint64_t global) {
    if (local != global) mappings[type].emplace_back(local, global);
  }
  void write(OTF2_DefWriter* w) const;
};

}  // namespace ezio::otf2
