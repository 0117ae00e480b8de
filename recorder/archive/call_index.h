// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// A batch of calls indexed for the archive's writer: the VFS, FS and throttling records of each
// call found by call id, the records with no call to nest into (orphans), and the batch's
// timeline (calls, forks and orphans in time order). Indexing touches no OTF2 state, so it is
// done on the thread that drains the rings (ArchivePipeline's index hook), leaving the writer
// thread, the recorder's busiest, only the walk and the encoding (docs/costs.md).
#include <cstdint>
#include <mutex>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "recorder/decode/record_store.h"

namespace ezio::recorder {

// A VFS, FS or throttling event with no recorded syscall around it (none was in flight, e.g. the
// vfs_open of an execve or a write fault of a mapping, or its syscall record was lost): written on
// its own, in time order.
struct Orphan {
  uint64_t t;
  uint32_t pid, tid;
  const ezio_vfs_rec* vfs;  // one of vfs, fs, throttle is set
  const ezio_fs_rec* fs;
  const ezio_throttle_rec* throttle;
};

// The records of one kind of a batch, by call: a range of a vector sorted by (call id, time),
// found in a vector sorted by call id. The calls are asked for in time order, which is each
// thread's call id order, so the next range is most often the one after the last found (no
// hashing, no allocation per call); else a binary search.
template <typename Rec>
struct CallRanges {
  struct Range {
    uint64_t call_id;
    uint32_t begin, end;
    bool called;  // the call's syscall record is in the batch
  };
  std::vector<Rec> owned;  // the batch's records, with those that waited for their call
  std::vector<const Rec*> sorted;
  std::vector<Range> ranges;  // by call id
  mutable size_t hint = 0;    // the range after the one last found

  Range* find(uint64_t call_id) const;
  // The records of a call whose syscall record is in the batch; nothing for the others.
  std::span<const Rec* const> of(uint64_t call_id) const;
};

struct TimelineItem {
  uint64_t t;
  const ezio_syscall_rec* sc;
  const OpenCall* open;
  const ProcEvent* proc;
  const Orphan* orphan;  // VFS/FS event outside any recorded syscall
};

struct CallIndex {
  CallRanges<ezio_vfs_rec> vfs;
  CallRanges<ezio_fs_rec> fs;
  CallRanges<ezio_throttle_rec> throttles;
  std::vector<Orphan> orphans;
  // Calls, new processes and orphans in time order, so that every fd table is in the state the
  // call saw. Points into the batch's records and the ranges above: moved with them, never copied.
  std::vector<TimelineItem> timeline;

  CallIndex() = default;
  CallIndex(CallIndex&&) = default;
  CallIndex& operator=(CallIndex&&) = default;
  CallIndex(const CallIndex&) = delete;
  CallIndex& operator=(const CallIndex&) = delete;
};

// A batch taken from the store (RecordStore::take_settled(before)) on its way to the archive.
struct ArchiveBatch {
  CallRecords records;  // its vfs, fs and throttles are in index once indexed
  uint64_t before = 0;
  std::optional<CallIndex> index;
};

// Indexes the batches in the order they are taken, on one thread at a time: the records of a call
// still in flight wait here for the batch that brings its syscall record.
class CallIndexer {
 public:
  // last: no call will come after this batch, every record without its call is an orphan.
  void index(ArchiveBatch& batch, bool last);
  // Gives back the index of a batch written, from any thread: its vectors' room is reused by a
  // later batch instead of being allocated and grown again for each.
  void recycle(CallIndex&& index);

 private:
  template <typename Rec>
  void build(CallRanges<Rec>& out, std::vector<Rec>& waiting, std::vector<Rec>&& records,
             const CallRecords& calls, bool last, std::vector<Orphan>& orphans) const;
  // Whether a call of this thread with a higher id was taken: calls of a thread are sequential
  // and ids grow, so a lower id's syscall record will never come.
  bool passed(uint32_t pid, uint32_t tid, uint64_t call_id) const;

  std::vector<ezio_vfs_rec> waiting_vfs_;
  std::vector<ezio_fs_rec> waiting_fs_;
  std::vector<ezio_throttle_rec> waiting_throttles_;
  std::unordered_map<uint64_t, uint64_t> last_call_;  // pid << 32 | tid -> highest call id taken
  std::mutex spare_mutex_;
  std::vector<CallIndex> spare_;  // emptied, their room kept; a few at most
};

}  // namespace ezio::recorder
