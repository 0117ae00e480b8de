#include "recorder/pagecache_archive.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <vector>

#include "common/otf2/check.h"

namespace ezio::recorder {
namespace {

constexpr size_t kMembers = 8;

std::array<uint64_t, kMembers> values_of(const ezio_pagecache_rec& r) {
  uint64_t ra = std::min<uint64_t>(r.readahead, r.added);
  uint64_t created = std::min<uint64_t>(r.created, r.added - ra);
  return {r.accessed, r.hits,   r.added - ra - created, ra, r.faults, r.mapped_around,
          r.dirtied,  r.evicted};
}

}  // namespace

uint64_t write_pagecache_layer(otf2::ArchiveWriter& w, const RecordStore& store,
                               const std::function<otf2::Ref(uint32_t pid)>& group_of,
                               const std::function<std::string(uint32_t, uint32_t)>& name_of,
                               PageCacheTotals& totals) {
  // Samples per thread, in time order; the last one holds the thread's totals.
  std::map<std::pair<uint32_t, uint32_t>, std::vector<const ezio_pagecache_rec*>> threads;
  for (const auto& r : store.pagecache()) threads[{r.h.pid, r.h.tid}].push_back(&r);
  for (const auto& [tid, r] : store.reclaimed()) totals.reclaimed += r.pages;
  if (threads.empty()) return 0;

  struct MemberDef {
    const char* name;
    const char* description;
  };
  static constexpr std::array<MemberDef, kMembers> defs = {{
      {"pagecache.accessed", "pages looked up by the read path"},
      {"pagecache.hits", "pages the read path found cached"},
      {"pagecache.misses", "pages inserted into the cache because they were needed"},
      {"pagecache.readahead", "pages inserted ahead of need (readahead)"},
      {"pagecache.faults", "page faults on file-backed mappings (mmap I/O)"},
      {"pagecache.mapped_around", "cached pages mapped by fault-around"},
      {"pagecache.dirtied", "pages made dirty (written, not yet on the device)"},
      {"pagecache.evicted", "pages removed from the cache in this thread's context"},
  }};
  std::vector<otf2::Ref> members;
  for (const auto& d : defs) {
    members.push_back(w.metric_member(d.name, d.description, OTF2_METRIC_TYPE_OTHER,
                                      OTF2_METRIC_ACCUMULATED_START, OTF2_TYPE_UINT64, "pages"));
  }
  otf2::Ref metric = w.metric_class(members, OTF2_METRIC_ASYNCHRONOUS, OTF2_RECORDER_KIND_ABSTRACT);
  std::array<OTF2_Type, kMembers> types;
  types.fill(OTF2_TYPE_UINT64);

  uint64_t last = 0;
  uint64_t n = 0;
  for (auto& [key, samples] : threads) {
    auto [pid, tid] = key;
    otf2::Ref group = group_of(pid);
    if (group == OTF2_UNDEFINED_LOCATION_GROUP) continue;  // a process with no location
    std::stable_sort(samples.begin(), samples.end(),
                     [](auto* a, auto* b) { return a->ts < b->ts; });
    uint64_t loc = (uint64_t(3) << 32) | n++;
    w.location(loc, fmt::format("pagecache {}", name_of(pid, tid)), OTF2_LOCATION_TYPE_METRIC,
               group);
    w.location_property(loc, "EZIOTRACE::TID", tid);
    // Evictions by others are seen in their context, not the thread's: a total, not a series.
    auto reclaimed = store.reclaimed().find(tid);
    w.location_property(loc, "EZIOTRACE::RECLAIMED_PAGES",
                        reclaimed == store.reclaimed().end() || reclaimed->second.pid != pid
                            ? 0
                            : reclaimed->second.pages);
    OTF2_EvtWriter* evt = w.events(loc);
    for (const ezio_pagecache_rec* r : samples) {
      auto v = values_of(*r);
      std::array<OTF2_MetricValue, kMembers> mv;
      for (size_t i = 0; i < kMembers; ++i) mv[i].unsigned_int = v[i];
      otf2::written(
          OTF2_EvtWriter_Metric(evt, nullptr, r->ts, metric, kMembers, types.data(), mv.data()));
      last = std::max<uint64_t>(last, r->ts);
    }
    auto v = values_of(*samples.back());
    totals.accessed += v[0];
    totals.hits += v[1];
    totals.misses += v[2];
    totals.readahead += v[3];
    totals.faults += v[4];
    totals.mapped_around += v[5];
    totals.dirtied += v[6];
    totals.evicted += v[7];
  }
  return last;
}

}  // namespace ezio::recorder
