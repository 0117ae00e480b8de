// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The names of the page-cache layer in an archive (docs/trace-model.md, Page-cache layer), shared
// by the recorder that writes them and the readers: one METRIC location per process, whose Metric
// events give the process's totals of a few counters (the members, what a viewer draws) and carry
// the whole sample of one thread as attributes (what the analyzers read).
#include <array>
#include <cstddef>
#include <string_view>

#include "common/schema/attributes.h"

namespace ezio::schema::pagecache {

// A thread's counters, in pages, cumulative from the start of the recording.
inline constexpr std::array<std::string_view, 8> kCounters = {
    "accessed", "hits", "misses", "readahead", "faults", "mapped_around", "dirtied", "evicted"};

// What each counter counts.
inline constexpr std::array<std::string_view, 8> kDescriptions = {
    "pages looked up by the read path",
    "pages the read path found cached",
    "pages inserted into the cache because they were needed",
    "pages inserted ahead of need (readahead)",
    "page faults on file-backed mappings (mmap I/O)",
    "cached pages mapped by fault-around",
    "pages made dirty (written, not yet on the device)",
    "pages removed from the cache by the thread itself",
};

// Attribute `pagecache.tid` (UINT64): the thread whose sample the event is.
inline constexpr std::string_view kTidAttribute = "pagecache.tid";
inline constexpr AttributeSpec kTid{kTidAttribute, "the thread whose page-cache sample this is",
                                    OTF2_TYPE_UINT64};
// Attributes `pagecache.thread.<counter>` (UINT64): that thread's totals, described as
// "<description>: the thread's total".
inline constexpr std::string_view kThreadCounterPrefix = "pagecache.thread.";
// The one member of the process's metric, `pagecache.absorbed`: the I/O the cache absorbed, pages
// the process's reads found cached (hits) plus pages its writes dirtied, cumulative; no other row
// shows them (misses, readahead and writeback show as block requests). One member: ViTE draws each
// member of each METRIC location as a row as high as a thread's.
inline constexpr std::string_view kProcessMember = "pagecache.absorbed";
inline constexpr std::array<size_t, 2> kAbsorbed = {1, 6};  // hits, dirtied
// Archives before this layout: one METRIC location per thread, members `pagecache.<counter>`.
inline constexpr std::string_view kMemberPrefix = "pagecache.";

}  // namespace ezio::schema::pagecache
