// SPDX-License-Identifier: GPL-2.0-only
#include "common/otf2/local_definitions.h"

#include <memory>

#include "common/error.h"
#include "common/otf2/check.h"

namespace ezio::otf2 {
namespace {

struct IdMapDeleter {
  void operator()(OTF2_IdMap* m) const { OTF2_IdMap_Free(m); }
};

}  // namespace

void LocalDefinitions::write(OTF2_DefWriter* w) const {
  for (const auto& [type, pairs] : mappings) {
    std::unique_ptr<OTF2_IdMap, IdMapDeleter> map(
        OTF2_IdMap_Create(OTF2_ID_MAP_SPARSE, pairs.size()));
    if (!map) fail("OTF2: cannot create a mapping table");
    for (const auto& [local, global] : pairs) {
      check(OTF2_IdMap_AddIdPair(map.get(), local, global), "filling a mapping table");
    }
    check(OTF2_DefWriter_WriteMappingTable(w, type, map.get()), "writing a mapping table");
  }
  for (const ClockOffset& c : clock_offsets) {
    check(OTF2_DefWriter_WriteClockOffset(w, c.time, c.offset, c.stddev), "writing a clock offset");
  }
}

}  // namespace ezio::otf2
