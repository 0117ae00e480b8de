// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The archives as the merge sees them: common/otf2's model of definitions and events, and the
// summary of an EZTrace archive (inputs.cpp reads it).
#include <otf2/otf2.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <vector>

#include "common/otf2/definitions.h"
#include "common/otf2/events.h"
#include "common/otf2/reader.h"
#include "converters/merge/event_store.h"

namespace ezio::converters {

using otf2::Attribute;
using otf2::CommDef;
using otf2::Definitions;
using otf2::Event;
using otf2::event_kind_name;
using otf2::EventKind;
using otf2::GroupDef;
using otf2::is_io_event;
using otf2::is_mpi_event;
using otf2::Ref;

using otf2::Archive;
using otf2::read_archive;  // a whole archive in memory (tests)

// An EZTrace archive as the merge needs it before it streams the events: the definitions, and
// per location what the filter of EZTrace's own work must know in advance.
struct UserLocation {
  uint64_t events = 0;
  uint64_t first_time = 0;     // of its first event
  uint64_t finalize_time = 0;  // of its first ENTER into "EZTrace finalize" (0: none)
  bool finalizes = false;
};
struct EztraceArchive {
  std::filesystem::path anchor;
  Definitions defs;
  // Locations without an event file have no entry.
  std::map<OTF2_LocationRef, UserLocation> locations;
  uint64_t unsupported_events = 0;
  // Its events, copied while they were summarized: the check and the writing replay them from
  // there instead of decoding the archive again.
  std::shared_ptr<EventStore> events;
};

}  // namespace ezio::converters
