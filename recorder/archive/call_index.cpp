// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/archive/call_index.h"

#include <algorithm>
#include <iterator>
#include <type_traits>

namespace ezio::recorder {
namespace {

template <typename Rec>
Orphan orphan_of(const Rec& r) {
  if constexpr (std::is_same_v<Rec, ezio_vfs_rec>) {
    return {r.t_enter, r.h.pid, r.h.tid, &r, nullptr, nullptr};
  } else if constexpr (std::is_same_v<Rec, ezio_fs_rec>) {
    return {r.t_enter, r.h.pid, r.h.tid, nullptr, &r, nullptr};
  } else {
    return {r.t_enter, r.h.pid, r.h.tid, nullptr, nullptr, &r};
  }
}

void timeline_of(const CallRecords& batch, const std::vector<Orphan>& orphans,
                 std::vector<TimelineItem>& items) {
  items.reserve(batch.syscalls.size() + batch.opens.size() + batch.procs.size() + orphans.size());
  for (const auto& s : batch.syscalls) items.push_back({s.t_enter, &s, nullptr, nullptr, nullptr});
  for (const auto& o : batch.opens) items.push_back({o.sc.t_enter, &o.sc, &o, nullptr, nullptr});
  for (const auto& p : batch.procs) {
    if (p.kind == EZIO_REC_FORK && !p.is_thread) {
      items.push_back({p.ts, nullptr, nullptr, &p, nullptr});
    }
  }
  for (const auto& o : orphans) items.push_back({o.t, nullptr, nullptr, nullptr, &o});
  auto by_time = [](const TimelineItem& a, const TimelineItem& b) { return a.t < b.t; };
  if (!std::is_sorted(items.begin(), items.end(), by_time)) {
    std::stable_sort(items.begin(), items.end(), by_time);
  }
}

// The records themselves are let go: the next batch brings its own vector of them.
template <typename Rec>
void empty(CallRanges<Rec>& r) {
  std::vector<Rec>().swap(r.owned);
  r.sorted.clear();
  r.ranges.clear();
  r.hint = 0;
}

}  // namespace

template <typename Rec>
typename CallRanges<Rec>::Range* CallRanges<Rec>::find(uint64_t call_id) const {
  auto* all = const_cast<Range*>(ranges.data());
  size_t n = ranges.size();
  if (hint < n && all[hint].call_id == call_id) return &all[hint++];
  // Between the one last found and the next: a call without records of this kind (a read has no
  // FS records), found absent without a search.
  if ((hint == n || call_id < all[hint].call_id) && hint > 0 && all[hint - 1].call_id < call_id) {
    return nullptr;
  }
  auto it = std::lower_bound(all, all + n, call_id,
                             [](const Range& r, uint64_t id) { return r.call_id < id; });
  if (it == all + n || it->call_id != call_id) return nullptr;
  hint = static_cast<size_t>(it - all) + 1;
  return it;
}

template <typename Rec>
std::span<const Rec* const> CallRanges<Rec>::of(uint64_t call_id) const {
  if (ranges.empty()) return {};
  const Range* r = find(call_id);
  if (!r || !r->called) return {};
  return {sorted.data() + r->begin, sorted.data() + r->end};
}

template struct CallRanges<ezio_vfs_rec>;
template struct CallRanges<ezio_fs_rec>;
template struct CallRanges<ezio_throttle_rec>;

bool CallIndexer::passed(uint32_t pid, uint32_t tid, uint64_t call_id) const {
  auto it = last_call_.find(uint64_t(pid) << 32 | tid);
  return it != last_call_.end() && it->second > call_id;
}

template <typename Rec>
void CallIndexer::build(CallRanges<Rec>& out, std::vector<Rec>& waiting, std::vector<Rec>&& records,
                        const CallRecords& calls, bool last, std::vector<Orphan>& orphans) const {
  if (waiting.empty()) {
    out.owned = std::move(records);  // the common case: no copy
  } else {
    out.owned.swap(waiting);
    out.owned.insert(out.owned.end(), std::make_move_iterator(records.begin()),
                     std::make_move_iterator(records.end()));
  }
  waiting.clear();
  out.sorted.reserve(out.owned.size());
  out.ranges.reserve(out.owned.size());
  for (const auto& r : out.owned) {
    if (r.call_id) {
      out.sorted.push_back(&r);
    } else {
      orphans.push_back(orphan_of(r));
    }
  }
  auto by_call = [](const Rec* a, const Rec* b) {
    return a->call_id != b->call_id ? a->call_id < b->call_id : a->t_enter < b->t_enter;
  };
  // Sorted already when one thread made them all (its call ids grow): then a pass, not a sort.
  if (!std::is_sorted(out.sorted.begin(), out.sorted.end(), by_call)) {
    std::stable_sort(out.sorted.begin(), out.sorted.end(), by_call);
  }
  for (uint32_t i = 0; i < out.sorted.size();) {
    uint32_t j = i;
    while (j < out.sorted.size() && out.sorted[j]->call_id == out.sorted[i]->call_id) ++j;
    out.ranges.push_back({out.sorted[i]->call_id, i, j, false});
    i = j;
  }
  out.hint = 0;
  auto mark = [&out](uint64_t id) {
    if (auto* r = out.find(id)) r->called = true;
  };
  for (const auto& sc : calls.syscalls) mark(sc.call_id);
  for (const auto& o : calls.opens) mark(o.sc.call_id);
  // Records whose syscall will not come (lost, or not one eziotrace traces) stand alone; those
  // of a call still in flight wait for the next batch. Their ranges stay, not called: of() gives
  // nothing for them.
  for (const auto& range : out.ranges) {
    if (range.called) continue;
    for (uint32_t k = range.begin; k < range.end; ++k) {
      const Rec& r = *out.sorted[k];
      if (last || passed(r.h.pid, r.h.tid, r.call_id)) {
        orphans.push_back(orphan_of(r));
      } else {
        waiting.push_back(r);
      }
    }
  }
  out.hint = 0;
}

void CallIndexer::index(ArchiveBatch& batch, bool last) {
  CallRecords& calls = batch.records;
  // The calls of a batch come mostly from one thread after another: its entry is kept.
  uint64_t key = UINT64_MAX;
  uint64_t* id = nullptr;
  auto note = [&](const ezio_syscall_rec& sc) {
    uint64_t k = uint64_t(sc.h.pid) << 32 | sc.h.tid;
    if (k != key) {
      key = k;
      id = &last_call_[k];
    }
    *id = std::max<uint64_t>(*id, sc.call_id);
  };
  for (const auto& sc : calls.syscalls) note(sc);
  for (const auto& o : calls.opens) note(o.sc);
  CallIndex& index = batch.index.emplace();
  {
    std::lock_guard lock(spare_mutex_);
    if (!spare_.empty()) {
      index = std::move(spare_.back());
      spare_.pop_back();
    }
  }
  build(index.vfs, waiting_vfs_, std::move(calls.vfs), calls, last, index.orphans);
  build(index.fs, waiting_fs_, std::move(calls.fs), calls, last, index.orphans);
  build(index.throttles, waiting_throttles_, std::move(calls.throttles), calls, last,
        index.orphans);
  calls.vfs.clear();
  calls.fs.clear();
  calls.throttles.clear();
  timeline_of(calls, index.orphans, index.timeline);
}

void CallIndexer::recycle(CallIndex&& index) {
  // Enough for the batch being indexed while one is written; more would only hold memory.
  constexpr size_t kMaxSpare = 2;
  empty(index.vfs);
  empty(index.fs);
  empty(index.throttles);
  index.orphans.clear();
  index.timeline.clear();
  std::lock_guard lock(spare_mutex_);
  if (spare_.size() < kMaxSpare) spare_.push_back(std::move(index));
}

}  // namespace ezio::recorder
