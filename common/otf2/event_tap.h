// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// A copy of every event an ArchiveWriter's typed EventWriter writes, as a reader of the archive
// would decode it (events.h), delivered right after OTF2 took it. The merged mode's merge takes
// the kernel archive's events from it while the recorder writes them, instead of decoding the
// archive again once the application has ended (docs/merge.md, "After the application ends").
#include <otf2/otf2.h>

#include "common/otf2/events.h"

namespace ezio::otf2 {

class EventTap {
 public:
  virtual ~EventTap() = default;
  // Each location's events in the order written (the order of its event file).
  virtual void event(OTF2_LocationRef location, const Event& e) = 0;
};

}  // namespace ezio::otf2
