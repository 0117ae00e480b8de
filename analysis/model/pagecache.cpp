// SPDX-License-Identifier: GPL-2.0-only
#include "analysis/model/pagecache.h"

#include <fmt/format.h>

#include <algorithm>

namespace ezio::analysis {
namespace layout = schema::pagecache;

namespace {

std::optional<size_t> counter_index(std::string_view name) {
  auto it = std::find(layout::kCounters.begin(), layout::kCounters.end(), name);
  if (it == layout::kCounters.end()) return std::nullopt;
  return static_cast<size_t>(it - layout::kCounters.begin());
}

}  // namespace

PageCacheDecoder::PageCacheDecoder(const Definitions& defs) : defs_(defs) {
  for (const auto& [id, name] : defs.attributes) {
    std::string_view n = name;
    if (n == layout::kTidAttribute) tid_attribute_ = id;
    if (!n.starts_with(layout::kThreadCounterPrefix)) continue;
    if (auto i = counter_index(n.substr(layout::kThreadCounterPrefix.size()))) {
      counter_attributes_[id] = *i;
    }
  }
  if (tid_attribute_) return;
  for (const auto& [id, name] : defs.metric_members) {
    std::string_view n = name;
    if (!n.starts_with(layout::kMemberPrefix)) continue;
    if (auto i = counter_index(n.substr(layout::kMemberPrefix.size()))) old_members_[id] = *i;
  }
}

std::optional<PageCacheSample> PageCacheDecoder::decode(OTF2_LocationRef loc,
                                                        const otf2::Event& e) const {
  if (e.kind != otf2::EventKind::Metric) return std::nullopt;
  PageCacheSample s;
  if (tid_attribute_) {
    bool has_tid = false;
    for (const otf2::Attribute& a : e.attributes) {
      auto v = otf2::integer_value(a.type, a.value);
      if (!v) continue;
      if (a.id == *tid_attribute_) {
        s.tid = static_cast<uint64_t>(*v);
        has_tid = true;
      } else if (auto c = counter_attributes_.find(a.id); c != counter_attributes_.end()) {
        s.totals[c->second] = static_cast<uint64_t>(*v);
      }
    }
    if (has_tid) return s;
    return std::nullopt;
  }
  // The per-thread layout: the location is the thread's, the members its counters.
  auto cls = defs_.metric_classes.find(e.ref);
  if (cls == defs_.metric_classes.end()) return std::nullopt;
  bool any = false;
  for (size_t i = 0; i < cls->second.size() && i < e.metric_values.size(); ++i) {
    auto m = old_members_.find(cls->second[i]);
    if (m == old_members_.end()) continue;
    s.totals[m->second] = e.metric_values[i].unsigned_int;
    any = true;
  }
  if (!any) return std::nullopt;
  auto tid = defs_.location_tids.find(loc);
  s.tid = tid == defs_.location_tids.end() ? loc : tid->second;
  return s;
}

std::map<std::string, uint64_t> pagecache_sum(const PageCacheThreads& threads) {
  std::map<std::string, uint64_t> all;
  for (const auto& [key, totals] : threads) {
    for (size_t i = 0; i < kPageCacheCounters; ++i) {
      all[std::string(layout::kCounters[i])] += totals[i];
    }
  }
  return all;
}

std::string pagecache_thread_name(const Definitions& defs, OTF2_LocationRef loc, uint64_t tid) {
  const LocationDef* cache = defs.location(loc);
  bool per_thread = std::none_of(defs.attributes.begin(), defs.attributes.end(),
                                 [](const auto& a) { return a.second == layout::kTidAttribute; });
  if (per_thread && cache) return cache->name;  // the older layout: the location is the thread's
  for (const auto& [id, t] : defs.location_tids) {
    const LocationDef* thread = defs.location(id);
    if (t == tid && thread && cache && thread->group == cache->group) {
      return fmt::format("pagecache {}", thread->name);
    }
  }
  return fmt::format("pagecache [{}]", tid);
}

}  // namespace ezio::analysis
