// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The analyzers' reader: an archive's definitions resolved (definitions.h) and its events decoded
// into the calls and I/O operations the sinks count, streamed location by location from
// common/otf2's reader, in time order within each location.
#include <otf2/otf2.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <vector>

#include "analysis/model/definitions.h"
#include "analysis/model/pagecache.h"
#include "common/otf2/reader.h"

namespace ezio::analysis {

// The attributes of an event that analyzers use; recognised by name suffix so that every layer's
// attributes (`syscall.bytes`, `block.bytes`...) are understood.
struct CallAttributes {
  bool has_bytes = false, has_result = false, has_offset = false;
  uint64_t bytes = 0;  // *.bytes: bytes requested
  int64_t result = 0;  // *.result: return value
  int64_t offset = 0;  // *.offset: explicit offset
  bool point = false;  // *.point != 0: a single tracepoint, its duration is unknown (not zero)
  // Block requests' and calls' cross references (docs/trace-model.md), 0 when absent.
  uint64_t call_id = 0;  // call.id
  uint64_t sector = 0;   // *.sector
  bool has_sector = false;
  uint64_t queue_ns = 0;    // *.queue_ns: creation -> issue
  uint64_t service_ns = 0;  // *.service_ns: issue -> completion
  uint64_t pid = 0;         // block.pid: the process a block request is attributed to
  uint32_t io_flags = 0;    // an IoOperationBegin's OTF2_IoOperationFlag (COLLECTIVE...)
  // The HDF5 module's (docs/analysis.md): hdf5.object (the dataset's path, a string of the
  // archive's definitions), hdf5.layout, hdf5.chunk_bytes.
  const std::string* object = nullptr;
  const std::string* layout = nullptr;
  uint64_t chunk_bytes = 0;
};

// Receives the events; default implementations ignore them.
class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void begin_location(OTF2_LocationRef) {}
  virtual void end_location(OTF2_LocationRef) {}
  virtual void enter(OTF2_LocationRef, uint64_t /*time*/, Ref /*region*/, const CallAttributes&) {}
  virtual void leave(OTF2_LocationRef, uint64_t /*time*/, Ref /*region*/, const CallAttributes&) {}
  // matching_id pairs the begin of an operation with its completion or cancellation; operations
  // outside any region (block requests) overlap and are paired by it.
  virtual void io_begin(OTF2_LocationRef, uint64_t /*time*/, Ref /*handle*/, OTF2_IoOperationMode,
                        uint64_t /*bytes_requested*/, uint64_t /*matching_id*/,
                        const CallAttributes&) {}
  virtual void io_complete(OTF2_LocationRef, uint64_t /*time*/, Ref /*handle*/, uint64_t /*bytes*/,
                           uint64_t /*matching_id*/) {}
  virtual void io_cancelled(OTF2_LocationRef, uint64_t /*time*/, Ref /*handle*/,
                            uint64_t /*matching_id*/) {}
  // A page-cache sample: one thread's cumulative counters (analysis/model/pagecache.h).
  virtual void pagecache(OTF2_LocationRef, uint64_t /*time*/, const PageCacheSample&) {}
  virtual void io_seek(OTF2_LocationRef, uint64_t /*time*/, Ref /*handle*/,
                       uint64_t /*offset_result*/) {}
  virtual void io_create_handle(OTF2_LocationRef, uint64_t /*time*/, Ref /*handle*/) {}
  virtual void io_destroy_handle(OTF2_LocationRef, uint64_t /*time*/, Ref /*handle*/) {}
};

class TraceReader {
 public:
  // See otf2::ArchiveReader: throws ezio::Error naming the path when it cannot be read.
  explicit TraceReader(const std::filesystem::path& path);

  const Definitions& defs() const { return defs_; }
  const std::filesystem::path& anchor() const { return archive_.anchor(); }

  // Streams all events to `sink`; `progress` (optional) is called between batches of events.
  // Locations for which `select` returns false are skipped without being read.
  // Exceptions thrown by the sink propagate after OTF2 has been left cleanly.
  void read_events(EventSink& sink,
                   const std::function<void(const otf2::ReadProgress&)>& progress = {},
                   const std::function<bool(OTF2_LocationRef)>& select = {});

 private:
  otf2::ArchiveReader archive_;
  Definitions defs_;
};

}  // namespace ezio::analysis
