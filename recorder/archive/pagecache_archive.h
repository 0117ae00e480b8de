// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The page-cache layer of an archive: per traced process, one METRIC location in its group whose
// Metric events carry the process's cumulative page counters, each event also carrying, as
// attributes, the cumulative counters of the thread whose sample it is (docs/trace-model.md).
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/otf2/writer.h"
#include "record.h"

namespace ezio::recorder {

struct PageCacheTotals {
  uint64_t accessed = 0, hits = 0, misses = 0, readahead = 0, faults = 0, mapped_around = 0,
           dirtied = 0, evicted = 0;
  uint64_t reclaimed = 0;  // evicted by others: kswapd, other processes
};

// Written while the recording goes on: a thread's samples (a few a second while it does
// page-cache work) are written as they come, so that they do not pile up in memory; the
// locations, named at the end, and the metric are defined by finish().
class PageCacheLayer {
 public:
  explicit PageCacheLayer(otf2::ArchiveWriter& w) : w_(w) {}

  // Takes samples: those of threads known(pid, tid) are written, the others wait until they are.
  void add(std::vector<ezio_pagecache_rec>&& samples,
           const std::function<bool(uint32_t pid, uint32_t tid)>& known);
  // Writes what waited for a process now known, and defines the locations (those of processes
  // group_of() does not know, OTF2_UNDEFINED_LOCATION_GROUP, are dropped) and the metric.
  // name_of(pid) is the process's display name. Returns the time of the last event (0 if none).
  uint64_t finish(const std::map<uint32_t, ezio_reclaimed>& reclaimed,
                  const std::function<otf2::Ref(uint32_t pid)>& group_of,
                  const std::function<std::string(uint32_t pid)>& name_of, PageCacheTotals& totals);
  // Samples received.
  uint64_t received() const { return received_; }

  // The thread's counters, in the order of their `pagecache.<name>` attributes.
  static constexpr size_t kCounters = 8;
  using Counters = std::array<uint64_t, kCounters>;

 private:
  struct Process {
    uint64_t location = 0;
    uint64_t last = 0;                    // time of its last sample written
    Counters sum{};                       // its threads' totals, summed
    std::map<uint32_t, Counters> thread;  // each thread's last sample: its totals
  };
  void write(const ezio_pagecache_rec& r);
  void define_attributes();
  void define_metric();

  otf2::ArchiveWriter& w_;
  std::map<uint32_t, Process> processes_;  // by pid
  std::vector<ezio_pagecache_rec> waiting_;
  otf2::Ref metric_ = 0;
  otf2::TypedAttribute tid_attribute_;
  std::array<otf2::TypedAttribute, kCounters> counter_attributes_{};
  uint64_t received_ = 0, last_ = 0;
};

}  // namespace ezio::recorder
