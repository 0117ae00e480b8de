// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The page-cache samples of an archive (docs/trace-model.md, Page-cache layer): each Metric event
// of a page-cache location is one thread's cumulative counters. Archives written before the
// per-process layout (one METRIC location per thread, its counters as the members) read the same.
#include <otf2/otf2.h>

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "analysis/model/definitions.h"
#include "common/otf2/events.h"
#include "common/schema/pagecache.h"

namespace ezio::analysis {

inline constexpr size_t kPageCacheCounters = schema::pagecache::kCounters.size();

struct PageCacheSample {
  uint64_t tid = 0;
  std::array<uint64_t, kPageCacheCounters> totals{};  // in kCounters' order
};

class PageCacheDecoder {
 public:
  explicit PageCacheDecoder(const Definitions& defs);
  // The sample a Metric event holds; nullopt for any other event.
  std::optional<PageCacheSample> decode(OTF2_LocationRef loc, const otf2::Event& e) const;

 private:
  const Definitions& defs_;
  std::optional<Ref> tid_attribute_;
  std::map<Ref, size_t> counter_attributes_;  // attribute -> index into kCounters
  std::map<Ref, size_t> old_members_;         // per-thread layout: member -> index
};

// Each thread's last sample, by its page-cache location and TID (a TID can be reused by another
// process): the thread's totals for the recording.
using PageCacheThreads =
    std::map<std::pair<OTF2_LocationRef, uint64_t>, std::array<uint64_t, kPageCacheCounters>>;

// Totals by counter name ("hits", "dirtied"...), summed over `threads`.
std::map<std::string, uint64_t> pagecache_sum(const PageCacheThreads& threads);
// "pagecache <thread location's name>" ("pagecache dd [4242]"), the name the thread's row has had
// since the first layout.
std::string pagecache_thread_name(const Definitions& defs, OTF2_LocationRef loc, uint64_t tid);

}  // namespace ezio::analysis
