#pragma once
// The page-cache layer of an archive: per traced thread, a METRIC location in its process's group
// carrying the thread's cumulative page counters as MetricEvents (docs/trace-model.md).
#include <cstdint>
#include <functional>

#include "common/otf2/writer.h"
#include "recorder/record_store.h"

namespace ezio::recorder {

struct PageCacheTotals {
  uint64_t accessed = 0, hits = 0, misses = 0, readahead = 0, faults = 0, mapped_around = 0,
           dirtied = 0, evicted = 0;
  uint64_t reclaimed = 0;  // evicted by others: kswapd, other processes
};

// group_of(pid) is the location group of a process, or nullopt-like UINT32_MAX when unknown;
// name_of(pid, tid) the thread's display name. Returns the time of the last event (0 if none).
uint64_t write_pagecache_layer(
    otf2::ArchiveWriter& w, const RecordStore& store,
    const std::function<otf2::Ref(uint32_t pid)>& group_of,
    const std::function<std::string(uint32_t pid, uint32_t tid)>& name_of, PageCacheTotals& totals);

}  // namespace ezio::recorder
