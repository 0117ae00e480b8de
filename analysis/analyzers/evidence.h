// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Everything `advise` and `report` look at, gathered in one streaming pass over a trace: per-layer
// totals (the `layers` figures), per-file access patterns, per-thread time and SCI, per-device
// queueing, metadata and sync calls, page-cache counters, a fixed-size timeline and the slowest
// calls with the kernel calls and block requests under them. Memory depends on the numbers of
// files, threads and devices, never on the number of events (docs/analysis.md, `report`).
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analysis/analyzers/collective.h"
#include "analysis/analyzers/datasets.h"
#include "analysis/analyzers/histogram.h"
#include "analysis/analyzers/host_evidence.h"
#include "analysis/analyzers/hpc_evidence.h"
#include "analysis/analyzers/layer_stats.h"
#include "analysis/analyzers/sci.h"
#include "analysis/model/file_origin.h"
#include "analysis/model/observed.h"

namespace ezio::analysis {

// Accesses of one file (or device) at one layer: how many, how big, in which order.
struct AccessStats {
  uint64_t sequential = 0, random = 0;  // reads and writes that carried the I/O events
  uint64_t small = 0;                   // reads and writes below the small-request size
  uint64_t misaligned_writes = 0;       // writes whose offset or size is not page-aligned
  uint64_t writes = 0;
  Log2Histogram sizes;  // bytes per read/write
  uint64_t classified() const { return sequential + random; }
};

struct FileEvidence {
  std::string path;
  FileOrigin origin = FileOrigin::kApplication;  // advise speaks of the application's files only
  LayerStats syscall;  // reads/writes/other at the syscall layer (the user layer when no syscalls)
  AccessStats access;
  uint64_t opens = 0, syncs = 0;
  uint64_t sync_ticks = 0;
  uint64_t throttles = 0, throttle_ticks = 0;       // dirty-throttling pauses inside calls on it
  std::map<std::string, uint64_t> threads;          // thread name -> calls on this file
  uint64_t stdio_calls = 0, stdio_passthrough = 0;  // user-level buffered calls, as Evidence's
  uint64_t infrastructure_calls = 0;  // calls left out as infrastructure (process_role.h)
  bool launcher = false;              // a launcher's process used it
};

struct DeviceEvidence {
  std::string name;  // "block loop3"
  LayerStats requests;
  AccessStats access;  // by sector: sequential when a request starts where the previous ended
  uint64_t queue_ns = 0, service_ns = 0;  // sums over requests
  uint64_t max_depth = 0;                 // most requests in flight at once
  double depth_ticks = 0;                 // integral of requests in flight over time
  uint64_t busy_ticks = 0;                // time with at least one request in flight
  uint64_t reads_in_writes = 0;           // read requests caused by a misaligned write call
  uint64_t reads_in_writes_bytes = 0;
  // Service time per byte of requests completing alone and among many (in flight >= the
  // crowded depth): a device that cannot serve more at once takes longer per request.
  uint64_t lone_count = 0, lone_ns = 0, lone_bytes = 0;
  uint64_t crowded_count = 0, crowded_ns = 0, crowded_bytes = 0;
};

struct ThreadEvidence {
  std::string name;
  uint64_t first = 0, last = 0;  // ticks
  uint64_t io_ticks = 0;         // syscall-level (else user-level) I/O time
  uint64_t io_calls = 0, bytes = 0;
  uint64_t throttles = 0, throttle_ticks = 0;  // writeback:balance_dirty_pages pauses
  std::array<SciAccumulator, 2> sci;           // syscall-level reads, writes
  double sci_score() const;
};

// Metadata and sync system calls (names in evidence.cpp).
struct CallClass {
  uint64_t count = 0, ticks = 0;
};

// A slow call and what it waited for down the stack.
struct SlowCall {
  uint64_t ticks = 0, start = 0;
  std::string thread, name, file;
  uint64_t bytes = 0, call_id = 0;
  std::vector<std::string>
      path;  // "vfs:vfs_write 1.2 ms", "block write 128 KiB queue .. service .."
};

// Activity over time: kBins equal bins over the trace, widened by merging pairs when events run
// past the end, so that its size is fixed.
struct Timeline {
  static constexpr size_t kBins = 240;
  uint64_t start = 0, width = 1;  // ticks
  std::array<std::array<uint64_t, kBins>, kLayerCount> ops{}, bytes{};
  std::array<uint64_t, kBins> max_depth{};
  std::array<uint64_t, kBins> throttled{};  // ticks of dirty-throttling pauses, all threads
  std::map<std::string, std::array<double, kBins>> thread_busy;  // ticks of I/O per bin
  std::vector<uint64_t> syncs;                                   // fsync/fdatasync times
  size_t bin(uint64_t t);                                        // widens when t is past the end
  void widen();
};

struct Evidence {
  std::string trace;
  uint64_t events = 0;
  double tick_s = 1e-9;
  uint64_t first = 0, last = 0;  // first and last event, ticks
  std::array<LayerStats, kLayerCount>
      layers;  // the application's I/O (all with EvidenceOptions::all)
  // The launcher's and start-up I/O, apart from the application's (empty with ::all).
  std::array<LayerStats, kLayerCount> infrastructure;
  std::array<LayerObservation, kLayerCount> observed;
  std::array<std::array<Observed, kOpCount>, kLayerCount> op_observed;  // as `layers` shows them
  std::map<std::string, uint64_t> pagecache;  // summed counters (pages), "hits", "misses"...
  std::map<std::string, uint64_t> lost;       // per layer
  std::string status;                         // "" when the archive says nothing
  std::map<std::string, std::string> probes;  // layer -> EZIOTRACE::PROBE value
  std::string command;           // as the user typed it (EZIOTRACE::USER_COMMAND, else ::COMMAND)
  std::string launched_command;  // EZIOTRACE::COMMAND: what eziotrace ran
  std::string host, kernel;      // kernel: EZIOTRACE::KERNEL_RELEASE
  std::string version;           // EZIOTRACE::VERSION: the archive's writer
  uint64_t realtime_start = 0;   // ns since the epoch, 0 if unknown
  std::vector<FileEvidence> files;
  std::vector<DeviceEvidence> devices;
  std::vector<ThreadEvidence> threads;
  CallClass metadata, syncs;
  uint64_t syscall_io_ticks = 0;  // all syscall-level I/O time (the metadata/sync share's base)
  uint64_t user_stdio_calls = 0;  // user-level buffered calls (fwrite, fread...)
  uint64_t user_stdio_passthrough = 0;  // of them, those that made a read/write system call
  std::map<std::string, uint64_t> user_stdio_files;
  std::vector<SlowCall> slowest;          // longest first
  std::vector<CollectiveOp> collectives;  // collective MPI-IO operations (`eziotrace collective`)
  std::vector<DatasetRow> datasets;       // HDF5 datasets (`eziotrace datasets`)
  DatasetLayersSeen datasets_seen;
  Timeline timeline;
  // writeback:balance_dirty_pages was recorded (EZIOTRACE::PROBE::pagecache names it, or pauses
  // are in the trace); pauses and their durations (ns).
  bool dirty_throttle_observed = false;
  uint64_t dirty_throttle_count = 0, dirty_throttle_ticks = 0;
  Log2Histogram dirty_pauses_ns;
  uint64_t small_request_bytes = 0;  // the size below which AccessStats::small counts
  HpcEvidence hpc;                   // MPI-IO and HDF5 calls (hpc_evidence.h)
  std::vector<HostEvidence> hosts;   // archives of several hosts only (host_evidence.h)

  double seconds(uint64_t ticks) const { return static_cast<double>(ticks) * tick_s; }
  double duration_s() const { return last > first ? seconds(last - first) : 0.0; }
  const LayerStats& layer(Layer l) const { return layers[static_cast<size_t>(l)]; }
  uint64_t lost_total() const;
};

struct EvidenceOptions {
  uint64_t small_request_bytes = 64 * 1024;
  size_t slowest = 10;
  uint64_t crowded_depth = 4;
  bool all = false;  // --all: the launcher's and start-up I/O counted as the application's
  HpcOptions hpc;
};

// Reads the trace once (progress on a terminal); throws ezio::Error on unreadable input.
Evidence collect_evidence(const std::string& trace, const EvidenceOptions& o);

}  // namespace ezio::analysis
