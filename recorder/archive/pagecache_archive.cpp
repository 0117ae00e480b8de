#include "recorder/archive/pagecache_archive.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/error.h"
#include "common/otf2/check.h"
#include "common/schema/properties.h"

namespace ezio::recorder {
namespace {

std::array<uint64_t, 8> values_of(const ezio_pagecache_rec& r) {
  uint64_t ra = std::min<uint64_t>(r.readahead, r.added);
  uint64_t created = std::min<uint64_t>(r.created, r.added - ra);
  return {r.accessed, r.hits,   r.added - ra - created, ra, r.faults, r.mapped_around,
          r.dirtied,  r.evicted};
}

}  // namespace

void PageCacheLayer::add(std::vector<ezio_pagecache_rec>&& samples,
                         const std::function<bool(uint32_t)>& known) {
  received_ += samples.size();
  if (!waiting_.empty()) {
    samples.insert(samples.begin(), waiting_.begin(), waiting_.end());
    waiting_.clear();
  }
  for (const auto& r : samples) {
    if (known(r.h.pid)) {
      write(r);
    } else {
      waiting_.push_back(r);
    }
  }
}

void PageCacheLayer::write(const ezio_pagecache_rec& r) {
  // The metric class is defined at the end with its members; its id is known now.
  if (threads_.empty()) metric_ = w_.next_metric_class();
  auto [it, added] = threads_.try_emplace({r.h.pid, r.h.tid});
  Thread& t = it->second;
  if (added) t.location = (uint64_t(3) << 32) | (threads_.size() - 1);
  // A thread sends its samples itself, in time order; the clamp only guards OTF2's order.
  t.last = std::max<uint64_t>(t.last, r.ts);
  t.values = values_of(r);
  std::array<OTF2_Type, kMembers> types;
  types.fill(OTF2_TYPE_UINT64);
  std::array<OTF2_MetricValue, kMembers> mv;
  for (size_t i = 0; i < kMembers; ++i) mv[i].unsigned_int = t.values[i];
  otf2::written(OTF2_EvtWriter_Metric(w_.events(t.location), nullptr, t.last, metric_, kMembers,
                                      types.data(), mv.data()));
  last_ = std::max(last_, t.last);
}

void PageCacheLayer::define_metric() {
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
    members.push_back(w_.metric_member(d.name, d.description, OTF2_METRIC_TYPE_OTHER,
                                       OTF2_METRIC_ACCUMULATED_START, OTF2_TYPE_UINT64, "pages"));
  }
  otf2::Ref expected = threads_.empty() ? w_.next_metric_class() : metric_;
  metric_ = w_.metric_class(members, OTF2_METRIC_ASYNCHRONOUS, OTF2_RECORDER_KIND_ABSTRACT);
  if (metric_ != expected) fail("OTF2: the page-cache metric got id {}, not {}", metric_, expected);
}

uint64_t PageCacheLayer::finish(const std::map<uint32_t, ezio_reclaimed>& reclaimed,
                                const std::function<otf2::Ref(uint32_t pid)>& group_of,
                                const std::function<std::string(uint32_t, uint32_t)>& name_of,
                                PageCacheTotals& totals) {
  add({}, [&](uint32_t pid) { return group_of(pid) != OTF2_UNDEFINED_LOCATION_GROUP; });
  for (const auto& [tid, r] : reclaimed) totals.reclaimed += r.pages;
  if (received_ == 0) return 0;
  define_metric();
  for (const auto& [key, t] : threads_) {
    auto [pid, tid] = key;
    w_.location(t.location, fmt::format("pagecache {}", name_of(pid, tid)),
                OTF2_LOCATION_TYPE_METRIC, group_of(pid));
    w_.location_property(t.location, schema::kTid, tid);
    // Evictions by others are seen in their context, not the thread's: a total, not a series.
    auto r = reclaimed.find(tid);
    w_.location_property(t.location, schema::kReclaimedPages,
                         r == reclaimed.end() || r->second.pid != pid ? 0 : r->second.pages);
    totals.accessed += t.values[0];
    totals.hits += t.values[1];
    totals.misses += t.values[2];
    totals.readahead += t.values[3];
    totals.faults += t.values[4];
    totals.mapped_around += t.values[5];
    totals.dirtied += t.values[6];
    totals.evicted += t.values[7];
  }
  return last_;
}

}  // namespace ezio::recorder
