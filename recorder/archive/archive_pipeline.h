// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The archive written on a thread of its own, fed batches of decoded records through a bounded
// queue by the thread that drains the rings. Draining is what keeps the kernel's rings from
// filling (and losing calls); encoding the events into OTF2 and copying the archive into the page
// cache is most of the recorder's work per call (docs/costs.md). On two threads the drain never
// waits for the encoding: it goes on taking records while a batch is written. When the writer
// falls behind by more than the queue holds, the drain thread takes no more batches; the store
// then fills, the drain stops, the rings fill and the kernel counts what it cannot take (the
// loss counters, as with one thread): memory stays bounded, nothing is lost silently.
//
// One writer thread writes every location: OTF2's event writers are not shared between threads,
// and each location's events stay in the order of the batches, which are taken in time order.
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include "common/error.h"
#include "recorder/archive/call_index.h"
#include "recorder/decode/record_store.h"

namespace ezio::recorder {

class ArchivePipeline {
 public:
  // Writes one batch: its calls ended before batch.before (KernelArchive::write_batch).
  using Write = std::function<void(ArchiveBatch&&)>;
  // Prepares a batch on the drain thread, in batch order, before it is queued
  // (KernelArchive::index): work taken off the writer, the busier thread.
  using Index = std::function<void(ArchiveBatch&)>;

  // max_queued: the records (as RecordStore::held counts them) queued past which no batch is
  // taken; a batch is always taken when the queue is empty.
  ArchivePipeline(Write write, size_t max_queued, Index index = nullptr);
  // Stops the writer at once: what is still queued is dropped (an error ends the recording).
  ~ArchivePipeline();
  ArchivePipeline(const ArchivePipeline&) = delete;
  ArchivePipeline& operator=(const ArchivePipeline&) = delete;

  // Moves the calls of store that ended before `before` into the queue, unless it is full (false:
  // nothing taken, the records stay in the store).
  bool offer(RecordStore& store, uint64_t before);
  // Waits for room in the queue, then offers; raises the writer's error if it met one.
  void push(RecordStore& store, uint64_t before);
  // Waits up to `timeout` for room in the queue (or for the writer's error).
  void wait_for_room(std::chrono::milliseconds timeout);
  // Waits until every queued batch is written and stops the writer; raises its error if it met
  // one. After it, the archive is the caller's thread's again.
  void flush();
  // The error the writer met (the batches after it are not written), if any.
  std::optional<Error> failure() const;
  // Batches taken while the queue was full are never: how often the drain thread found it full.
  uint64_t times_full() const;
  // The writer thread's CPU time (ns), once flushed: what bounds the recorder's rate when it is
  // the busier of the two threads (bench/syscall/recorder_rate.sh prints it per call).
  uint64_t writer_cpu_ns() const;

 private:
  bool has_room() const;  // under mutex_
  void run();

  Write write_;
  Index index_;
  const size_t max_queued_;
  mutable std::mutex mutex_;
  std::condition_variable work_, room_;
  struct Batch {
    ArchiveBatch batch;
    size_t size;
  };
  std::deque<Batch> queue_;
  size_t queued_ = 0;  // records in queue_ and in the batch being written
  bool stop_ = false, drop_ = false;
  uint64_t times_full_ = 0;
  uint64_t writer_cpu_ns_ = 0;
  std::optional<Error> failure_;
  std::thread thread_;  // last: started once the rest is ready
};

}  // namespace ezio::recorder
