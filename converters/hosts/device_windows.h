// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// A host's unattributed and not-issued block requests from several parts (several tasks of one
// step on a node, each recorded by a kernel session of its own, docs/cluster.md "Several parts of
// one host"). The node's kernel programs count them in one table that every session reads and
// that never decreases; each session's part has the table's values at its start and end. The
// requests the host's sessions saw between them are those of the union of their windows: sorted
// by their start values, the windows' [start, end] ranges of the counter merged where they
// overlap, their lengths summed. Exact, whatever the windows' overlaps: the counter does not
// decrease, so windows apart in time are apart (or touching) in its values too.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/otf2/definitions.h"

namespace ezio::converters {

// The counts of one device: unattributed requests, their bytes, empty flushes not issued.
using DeviceCounts = std::array<uint64_t, 3>;

// One part's location of a device ("block <dev>").
struct DeviceWindow {
  std::string part;       // the part as named on the command line
  DeviceCounts counts{};  // its session's own counts (the change over its window)
  uint64_t table = 0;     // the table its window was read from; 0: no window (an older part)
  DeviceCounts start{}, end{};
  // The disk's own count of completed requests at the window's start and end (read with the
  // table); device_end 0: not read (an older eziotraced).
  uint64_t device_start = 0, device_end = 0;
};

// The device location `location` of part `part`, from its properties.
DeviceWindow device_window(const otf2::Definitions& d, OTF2_LocationRef location, std::string part);

// The length of the union of the ranges [first, second] (a range with second < first is empty).
uint64_t union_length(std::vector<std::pair<uint64_t, uint64_t>> ranges);

// The host's counts of one device from its parts' windows: per table, the union of its windows;
// a part without a window (recorded before parts had them) counts as its own counts. The host's
// value is the largest of those (as it was for every part before the windows were written: each
// session counts what the others' windows see too). `rule` says which was taken, for the merge's
// verbose output.
DeviceCounts host_device_counts(const std::vector<DeviceWindow>& parts, std::string& rule);

// The host's counts of one device that fell between its sessions' windows, while none was open:
// per table, the span of its windows (the first start to the last end) less their union, summed
// over the tables. The table counted those requests (no process of any session made them) but
// no session took them, so they are in no count above: the merge writes them on the host's node
// (EZIOTRACE::OUTSIDE_WINDOWS::<dev>) instead of losing them silently. Parts without a window
// have no span and add nothing.
DeviceCounts host_device_gaps(const std::vector<DeviceWindow>& parts);

// The disk's own requests between the host's sessions' windows: the span of their device counts
// less their union. Preferred to the table's gaps for the count: eziotraced detaches its
// programs while no session is open, so the table counts nothing in a gap where the host had no
// session at all, while the disk counts everything. nullopt when a window lacks the device's
// counts.
std::optional<uint64_t> host_device_requests_between(const std::vector<DeviceWindow>& parts);

}  // namespace ezio::converters
