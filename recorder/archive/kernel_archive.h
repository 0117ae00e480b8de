// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Turns the records of a recording into an OTF2 archive (see docs/trace-model.md).
#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "common/otf2/event_tap.h"
#include "recorder/archive/call_index.h"
#include "recorder/archive/pagecache_archive.h"
#include "recorder/core/recording_info.h"
#include "recorder/decode/record_store.h"

namespace ezio::recorder {

struct LayerTotals {
  uint64_t events = 0;
  uint64_t reads = 0, writes = 0, other = 0;
  uint64_t bytes_read = 0, bytes_written = 0;
  uint64_t time_ns = 0;
};

struct ArchiveSummary {
  std::array<LayerTotals, EZIO_LAYER_COUNT> layers{};
  uint64_t processes = 0, threads = 0;
  std::vector<std::string> left_at_privileged_exec;    // "program [pid]"
  PageCacheTotals pagecache;                           // pages, all traced threads
  std::map<std::string, UnattributedIo> unattributed;  // block requests per device name
};

// Writes the archive into dir (which must not hold one yet) while the records arrive: the
// calls are written as soon as no later record can change them, so the archive is nearly done
// when the application ends and the records do not pile up in memory. The block and page-cache
// layers, and the definitions, are written by finish().
class KernelArchive {
 public:
  // info is read now (command, root pid, cwd, descriptors) and again by finish() (times, losses,
  // status, probes): it must outlive this.
  KernelArchive(const std::filesystem::path& dir, const RecordingInfo& info);
  ~KernelArchive();
  KernelArchive(const KernelArchive&) = delete;
  KernelArchive& operator=(const KernelArchive&) = delete;

  // Writes the calls of store that ended before `before` (CLOCK_MONOTONIC ns) and drops them.
  // Records must have been received in ring-buffer order up to a time past `before`.
  // `meanwhile` is called every few thousand events written: the recorder drains the ring buffer
  // into store there, so that a long batch does not leave the kernel's buffer to fill up.
  void write_settled(RecordStore& store, uint64_t before,
                     const std::function<void()>& meanwhile = nullptr);
  // Indexes a batch taken from the store (CallIndexer), before it is written. It touches no state
  // the writing does: it may run on another thread than write_batch (ArchivePipeline's drain
  // thread), one thread at a time, in the order the batches are written.
  void index(ArchiveBatch& batch);
  // Writes a batch taken from the store (indexed here unless it was), on any one thread at a time
  // (ArchivePipeline's writer).
  void write_batch(ArchiveBatch&& batch);
  // Writes everything left and closes the archive.
  ArchiveSummary finish(RecordStore& store);
  // Every event written from now on is also given to tap (the merged mode's merge takes them
  // from there instead of decoding the archive again); nullptr: none. With write_events false,
  // only to the tap: the archive has its definitions but no event file
  // (otf2::ArchiveWriter::tap).
  void tap(otf2::EventTap* tap, bool write_events = true);
  // Every field on every event (trace model 1, docs/trace-model.md) instead of model 2: for the
  // tests that compare both models.
  void model1();

 private:
  class Builder;
  std::unique_ptr<Builder> b_;
  CallIndexer indexer_;  // apart from the builder: used by the thread that indexes
};

// The whole archive at once, from records already received (tests, tools).
ArchiveSummary write_kernel_archive(const std::filesystem::path& dir, RecordStore& store,
                                    const RecordingInfo& info);

}  // namespace ezio::recorder
