// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Per-layer accumulation shared by `layers`, `files` and `latency`: operation counts, bytes, time
// and a log2 latency histogram per operation kind.
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/analyzers/histogram.h"
#include "analysis/model/calls.h"
#include "analysis/model/pagecache.h"

namespace ezio::analysis {

struct OpStats {
  uint64_t count = 0;
  uint64_t bytes = 0;
  uint64_t ticks = 0;
  Log2Histogram latency_ns;
};

struct LayerStats {
  std::array<OpStats, kOpCount> ops;

  void add(const Call& c, double ns_per_tick) {
    OpStats& s = ops[static_cast<size_t>(c.op)];
    ++s.count;
    if (c.has_bytes && c.op != Op::kOther) s.bytes += c.bytes;
    if (c.point) return;  // no duration to time
    s.ticks += c.duration();
    s.latency_ns.add(static_cast<uint64_t>(static_cast<double>(c.duration()) * ns_per_tick));
  }
  void merge(const LayerStats& o) {
    for (size_t i = 0; i < kOpCount; ++i) {
      ops[i].count += o.ops[i].count;
      ops[i].bytes += o.ops[i].bytes;
      ops[i].ticks += o.ops[i].ticks;
      ops[i].latency_ns.merge(o.ops[i].latency_ns);
    }
  }
  uint64_t count() const { return ops[0].count + ops[1].count + ops[2].count; }
  uint64_t ticks() const { return ops[0].ticks + ops[1].ticks + ops[2].ticks; }
  Log2Histogram all_latency() const {
    Log2Histogram h = ops[0].latency_ns;
    h.merge(ops[1].latency_ns);
    h.merge(ops[2].latency_ns);
    return h;
  }
};

// One page-cache counter ("hits", "dirtied"...) of summed totals; 0 when no thread reported it.
inline uint64_t pagecache_count(const std::map<std::string, uint64_t>& totals,
                                std::string_view key) {
  auto it = totals.find(std::string(key));
  return it == totals.end() ? 0 : it->second;
}

// The page cache has no calls of its own: as a layer it counts the pages of the recorder's
// counters, looked up (reads), dirtied (writes) and evicted (other), and those pages in bytes.
inline LayerStats pagecache_layer(const std::map<std::string, uint64_t>& totals) {
  auto get = [&](const char* k) { return pagecache_count(totals, k); };
  constexpr uint64_t kPage = 4096;
  LayerStats s;
  s.ops[static_cast<size_t>(Op::kRead)].count = get("accessed");
  s.ops[static_cast<size_t>(Op::kWrite)].count = get("dirtied");
  s.ops[static_cast<size_t>(Op::kOther)].count = get("evicted");
  s.ops[static_cast<size_t>(Op::kRead)].bytes = get("accessed") * kPage;
  s.ops[static_cast<size_t>(Op::kWrite)].bytes = get("dirtied") * kPage;
  return s;
}

// The layer the application's bytes are measured at: the highest of the stack that moved any
// (HDF5, MPI-IO, EZTrace's POSIX calls), else the system calls. `bytes_at(layer)` gives a layer's
// bytes of one operation.
template <class BytesAt>
Layer application_layer(BytesAt bytes_at) {
  for (Layer l : kAllLayers) {
    if (!is_user_level(l)) break;
    if (bytes_at(l) > 0) return l;
  }
  return Layer::kSyscall;
}

// User-level regions are only I/O when they carry I/O events or the FILE_IO role (EZTrace also
// records "Working", main, OpenMP...); every kernel-layer region is I/O.
// Page-cache regions are not I/O calls: the layer's reads and writes are its page counters, and
// its only region is a writer's dirty-throttling pause (pagecache:balance_dirty_pages).
inline bool counts_as_io(const Call& c) {
  if (c.info->layer == Layer::kPageCache) return false;
  return c.info->layer != Layer::kUser || c.is_io() || c.info->file_io_role;
}

// A thread's page-cache sample replaces its earlier ones: the counters accumulate from the start,
// so its last sample holds its totals.
inline void take_pagecache_sample(OTF2_LocationRef loc, const PageCacheSample& s,
                                  PageCacheThreads& threads) {
  threads[{loc, s.tid}] = s.totals;
}

}  // namespace ezio::analysis
