#pragma once
// An OTF2 archive held in memory, as the merge needs it: the definitions and every location's
// events exactly as the archive wrote them (common/otf2's model), to be rewritten.
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

struct Archive {
  std::filesystem::path anchor;
  Definitions defs;
  // Locations without an event file have no entry.
  std::map<OTF2_LocationRef, std::vector<Event>> events;
  uint64_t unsupported_events = 0;  // records of kinds the model does not hold
};

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

// Reads an EZTrace archive's definitions, and its events into the summary and an event store (a
// temporary file in temp_dir): the archive's one pass.
EztraceArchive index_eztrace_archive(const std::filesystem::path& anchor,
                                     const std::filesystem::path& temp_dir);

// Reads a whole archive (anchor = the .otf2 file, or its directory); throws ezio::Error when it
// cannot be read.
Archive read_archive(const std::filesystem::path& anchor);

}  // namespace ezio::converters
