// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// merge-hosts' assembly (docs/cluster.md, "Assembly where the parts were recorded"): a part's
// event files become the job archive's as they are (hard links), never decoded; the central step
// only maps the part's definitions onto the job's. Each of the part's locations gets a local
// definition file with OTF2's mapping tables (the part's ids -> the job's) and two ClockOffset
// records (the part's clock map), which OTF2's readers apply to every event they read: the
// archive reads as the full merge writes it.
#include <cstdint>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "converters/hosts/host_output.h"

namespace ezio::converters {

// A part's event file and where it goes once the archive is closed.
struct EventLink {
  std::filesystem::path from, to;
};

// The I/O paradigm identifications of the parts assembled so far, in the job archive's order:
// OTF2 has no mapping table for I/O paradigms, so a part is assembled only when its paradigm ids
// are the job's already.
using ParadigmOrder = std::vector<std::string>;

// Why the part's events must be read and rewritten instead ("" when it can be assembled): its
// recording is not whole, its event files are missing or of another chunk size, cannot be linked
// from out_dir (another file system, not the user's), or its I/O paradigm ids differ from the
// job's. On success its paradigms are appended to `order`.
std::string assembly_obstacle(const HostPart& p, const otf2::Definitions& d,
                              const std::filesystem::path& out_dir, ParadigmOrder& order);

// Defines the part's definitions in the job archive (all of them: its events are not read to see
// which are used), gives each of its locations its mapping tables and clock offsets, and notes
// its event files in `links`; its locations in `dropped` (eventless) are left out. Returns the
// events its locations declare.
uint64_t assemble_part(Output& out, const HostPart& p, const otf2::Definitions& d,
                       const otf2::Definitions& comm_defs, uint64_t shift,
                       const std::set<OTF2_LocationRef>& dropped, std::vector<EventLink>& links);

// Hard-links every part's event file into the closed archive.
void link_event_files(const std::vector<EventLink>& links);

}  // namespace ezio::converters
