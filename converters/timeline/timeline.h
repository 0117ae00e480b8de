// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The layered timeline that the Pajé and Perfetto exports draw, read from an archive in one
// streaming walk per kind of location (docs/timeline.md):
//  - each thread's calls, one row per layer (HDF5, MPI-IO, user, syscall, VFS, FS), nested
//    within a row;
//  - each block device's requests, a request on the first lane free when it was created,
//    queued then in service;
//  - a link from the syscall that caused a request (the request's call.id) to the request;
//  - each process's page-cache totals.
// Memory: the call stack of the location being read, the requests in flight on a device, and
// one 32-byte entry per block request that names a call (to draw its link).
#include <otf2/otf2.h>

#include <array>
#include <bitset>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "analysis/model/definitions.h"
#include "analysis/model/layer.h"
#include "common/otf2/reader.h"
#include "converters/timeline/palette.h"

namespace ezio::converters {

using analysis::Layer;
using otf2::Ref;

struct TimelineOptions {
  // Absolute archive ticks; events outside are left out, calls crossing an edge are cut to it.
  std::optional<std::pair<uint64_t, uint64_t>> window;
  std::optional<uint64_t> tid;  // only this thread (and the requests it caused)
  std::bitset<analysis::kLayerCount> layers = ~std::bitset<analysis::kLayerCount>{};
  bool has(Layer l) const { return layers.test(static_cast<size_t>(l)); }
};

// Rows of a thread: the layers drawn one under the other, in stack order.
inline constexpr std::array<Layer, 6> kRowLayers = {Layer::kHdf5,    Layer::kMpiIo, Layer::kUser,
                                                    Layer::kSyscall, Layer::kVfs,   Layer::kFs};
size_t row_index(Layer l);  // into kRowLayers; only for those layers

struct ThreadSummary {
  OTF2_LocationRef location;
  Ref group;
  uint64_t first = 0;                                // first time drawn
  std::array<uint64_t, kRowLayers.size()> states{};  // calls drawn per row (kRowLayers order)
  bool drawn() const {
    for (uint64_t n : states) {
      if (n > 0) return true;
    }
    return false;
  }
};

struct DeviceSummary {
  OTF2_LocationRef location;
  uint64_t first = 0;
  unsigned lanes = 0;
  uint64_t requests = 0, links = 0;
};

struct CacheSummary {
  Ref group;
  uint64_t first = 0;
};

// A link's two ends share this key: the device and its request number there.
struct LinkKey {
  OTF2_LocationRef device;
  uint64_t request;
};

class TimelineSink {
 public:
  virtual ~TimelineSink() = default;
  virtual void call_begin(OTF2_LocationRef thread, Layer, uint64_t time, Ref region) = 0;
  virtual void call_end(OTF2_LocationRef thread, Layer, uint64_t start, uint64_t end,
                        Ref region) = 0;
  // At the start of the syscall that caused request `key` (drawn later by request_queued).
  virtual void link_start(OTF2_LocationRef thread, uint64_t time, LinkKey key, BlockOp op) = 0;
  virtual void request_queued(OTF2_LocationRef device, unsigned lane, uint64_t time,
                              uint64_t request, BlockOp op, bool linked) = 0;
  virtual void request_issued(OTF2_LocationRef device, unsigned lane, uint64_t time,
                              BlockOp op) = 0;
  virtual void request_done(OTF2_LocationRef device, unsigned lane, uint64_t queued,
                            uint64_t issued, uint64_t done, BlockOp op, uint64_t bytes) = 0;
  // A thread's page-cache totals and their growth since its previous sample (`group` is its
  // process).
  virtual void cache_grew(Ref group, uint64_t tid, uint64_t time,
                          const std::array<uint64_t, kCacheVarCount>& totals,
                          const std::array<uint64_t, kCacheVarCount>& growth) = 0;
  // Around each location's events, which are in time order within it.
  virtual void location_begin(OTF2_LocationRef) {}
  virtual void location_end(OTF2_LocationRef) {}
  virtual void thread_done(const ThreadSummary&) {}
  virtual void device_done(const DeviceSummary&) {}
  virtual void cache_done(const CacheSummary&) {}
};

// What kind of timeline element a location holds.
enum class LocationRole { kThread, kDevice, kCache, kOther };

class Timeline {
 public:
  // Throws ezio::Error naming the path when it is not a readable archive.
  Timeline(const std::filesystem::path& archive, TimelineOptions options);

  const analysis::Definitions& defs() const { return defs_; }
  const otf2::Definitions& raw_defs() const { return reader_.defs(); }
  const TimelineOptions& options() const { return options_; }
  void set_options(TimelineOptions o) { options_ = std::move(o); }
  const std::filesystem::path& anchor() const { return reader_.anchor(); }
  LocationRole role(OTF2_LocationRef loc) const;
  // TID of a thread location (the location id for threads without the property).
  uint64_t tid_of(OTF2_LocationRef loc) const;
  uint64_t pid_of(Ref group) const;
  // First and last tick of the archive (from its clock properties).
  uint64_t begin() const { return defs_.global_offset; }
  uint64_t end() const { return defs_.global_offset + defs_.trace_length; }
  // Events the selected locations declare, scaled to the window: what an export will hold.
  uint64_t estimated_events() const;

  // Walks the archive: devices (links), threads, devices (requests), page cache.
  void run(TimelineSink& sink);

 private:
  bool selected(OTF2_LocationRef loc) const;

  otf2::ArchiveReader reader_;
  analysis::Definitions defs_;
  TimelineOptions options_;
};

}  // namespace ezio::converters
