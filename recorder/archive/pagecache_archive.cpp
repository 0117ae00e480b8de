// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/archive/pagecache_archive.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/error.h"
#include "common/otf2/check.h"
#include "common/schema/pagecache.h"
#include "common/schema/properties.h"

namespace ezio::recorder {
namespace {

namespace layout = schema::pagecache;

PageCacheLayer::Counters values_of(const ezio_pagecache_rec& r) {
  uint64_t ra = std::min<uint64_t>(r.readahead, r.added);
  uint64_t created = std::min<uint64_t>(r.created, r.added - ra);
  return {r.accessed, r.hits,   r.added - ra - created, ra, r.faults, r.mapped_around,
          r.dirtied,  r.evicted};
}

}  // namespace

void PageCacheLayer::add(std::vector<ezio_pagecache_rec>&& samples,
                         const std::function<bool(uint32_t, uint32_t)>& known) {
  received_ += samples.size();
  if (!waiting_.empty()) {
    samples.insert(samples.begin(), waiting_.begin(), waiting_.end());
    waiting_.clear();
  }
  // Several threads share a process's location, whose events must be in time order.
  std::stable_sort(samples.begin(), samples.end(),
                   [](const auto& a, const auto& b) { return a.ts < b.ts; });
  for (const auto& r : samples) {
    if (known(r.h.pid, r.h.tid)) {
      write(r);
    } else {
      waiting_.push_back(r);
    }
  }
}

void PageCacheLayer::define_attributes() {
  tid_attribute_ = w_.attribute(layout::kTid);
  for (size_t i = 0; i < kCounters; ++i) {
    std::string name = fmt::format("{}{}", layout::kThreadCounterPrefix, layout::kCounters[i]);
    std::string description = fmt::format("{}: the thread's total", layout::kDescriptions[i]);
    counter_attributes_[i] = w_.attribute({name, description, OTF2_TYPE_UINT64});
  }
}

void PageCacheLayer::write(const ezio_pagecache_rec& r) {
  // The metric class is defined at the end with its members; its id is known now.
  if (processes_.empty()) {
    metric_ = w_.next_metric_class();
    define_attributes();
  }
  auto [it, added] = processes_.try_emplace(r.h.pid);
  Process& p = it->second;
  if (added) p.location = (uint64_t(3) << 32) | (processes_.size() - 1);
  // Samples arrive in time order per thread; the clamp keeps OTF2's order across the threads
  // (and for samples that waited for their process).
  p.last = std::max<uint64_t>(p.last, r.ts);
  Counters now = values_of(r);
  Counters& before = p.thread[r.h.tid];
  // A derived counter may shrink between two samples: modular arithmetic keeps the sum exact.
  for (size_t i = 0; i < kCounters; ++i) p.sum[i] += now[i] - before[i];
  before = now;

  otf2::EventWriter evt = w_.event_writer(p.location);
  otf2::EventAttributes al = evt.attributes();
  al.add(tid_attribute_, r.h.tid);
  for (size_t i = 0; i < kCounters; ++i) al.add(counter_attributes_[i], now[i]);
  uint64_t absorbed = 0;
  for (size_t i : layout::kAbsorbed) absorbed += p.sum[i];
  evt.metric(p.last, metric_, absorbed, al);
  last_ = std::max(last_, p.last);
}

void PageCacheLayer::define_metric() {
  std::vector<otf2::Ref> members = {w_.metric_member(
      layout::kProcessMember,
      "pages the process's reads found cached plus pages its writes dirtied (the thread "
      "attributes pagecache.thread.* have every counter)",
      OTF2_METRIC_TYPE_OTHER, OTF2_METRIC_ACCUMULATED_START, OTF2_TYPE_UINT64, "pages")};
  otf2::Ref expected = processes_.empty() ? w_.next_metric_class() : metric_;
  metric_ = w_.metric_class(members, OTF2_METRIC_ASYNCHRONOUS, OTF2_RECORDER_KIND_ABSTRACT);
  if (metric_ != expected) fail("OTF2: the page-cache metric got id {}, not {}", metric_, expected);
}

uint64_t PageCacheLayer::finish(const std::map<uint32_t, ezio_reclaimed>& reclaimed,
                                const std::function<otf2::Ref(uint32_t pid)>& group_of,
                                const std::function<std::string(uint32_t)>& name_of,
                                PageCacheTotals& totals) {
  add({}, [&](uint32_t pid, uint32_t) { return group_of(pid) != OTF2_UNDEFINED_LOCATION_GROUP; });
  for (const auto& [tid, r] : reclaimed) totals.reclaimed += r.pages;
  if (received_ == 0) return 0;
  define_metric();
  for (const auto& [pid, p] : processes_) {
    w_.location(p.location, fmt::format("pagecache {}", name_of(pid)), OTF2_LOCATION_TYPE_METRIC,
                group_of(pid));
    w_.location_property(p.location, schema::kPid, pid);
    // Evictions by others are seen in their context, not the threads': a total, not a series.
    uint64_t others = 0;
    for (const auto& [tid, r] : reclaimed) {
      if (r.pid == pid) others += r.pages;
    }
    w_.location_property(p.location, schema::kReclaimedPages, others);
    const Counters& s = p.sum;
    totals.accessed += s[0];
    totals.hits += s[1];
    totals.misses += s[2];
    totals.readahead += s[3];
    totals.faults += s[4];
    totals.mapped_around += s[5];
    totals.dirtied += s[6];
    totals.evicted += s[7];
  }
  return last_;
}

}  // namespace ezio::recorder
