// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The job archive merge-hosts writes, shared by the two ways a part gets into it: its events read
// and rewritten (merge_hosts.cpp) or its event files taken as they are (assemble_part.h).
#include <cstdint>
#include <filesystem>
#include <memory>
#include <set>

#include "common/otf2/definitions.h"
#include "common/otf2/writer.h"
#include "converters/hosts/host_part.h"
#include "converters/hosts/host_properties.h"
#include "converters/merge/comm_mapper.h"
#include "converters/merge/definition_mapper.h"

namespace ezio::converters {

// The writer's state shared by the parts, and the time range written.
struct Output {
  explicit Output(const std::filesystem::path& dir)
      : w(dir), comms(w), shared{w, {}, comms, {}, {}, {}} {}
  otf2::ArchiveWriter w;
  CommMapper comms;
  SharedDefinitions shared;
  uint64_t t_min = UINT64_MAX, t_max = 0;
  // CLOCK_REALTIME at realtime_at (reference time), from the first part that knows it.
  uint64_t realtime = OTF2_UNDEFINED_TIMESTAMP, realtime_at = 0;
};

// The host's node (once), the part's location groups and locations under it (ids moved up by
// shift, but those in `dropped`), and its clock range and realtime on the reference's timeline.
void define_part(Output& out, const HostPart& p, const otf2::Definitions& d, otf2::Ref root,
                 HostNode& host, HostTotals& totals, uint64_t shift,
                 const std::set<OTF2_LocationRef>& dropped = {});

// A part's groups and communicators with the names they use: what CommMapper needs of every part
// at once.
std::unique_ptr<otf2::Definitions> comm_definitions(const otf2::Definitions& d);

// The ranks of the part's COMM_LOCATIONS groups that are another host's (CommMapper::add_archive):
// members that are no location of the part, or the stand-in the one-node merge gave a rank of
// another host (an eventless location in a group named by stand_in_group_name()).
std::set<uint64_t> ranks_elsewhere(const otf2::Definitions& d);

}  // namespace ezio::converters
