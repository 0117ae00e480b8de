// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// What the MPI-IO and HDF5 calls of a trace did, for advise's rules on them
// (advise_rules_mpiio.cpp, advise_rules_hdf5.cpp): per file, independent and collective accesses,
// what the collective calls' aggregation turned into (the system calls inside them and the block
// requests those caused), shared-file-pointer calls; per HDF5 dataset, its writes and chunks; per
// HDF5 file, the time of its flushes and of the small writes near its start (metadata).
// Calls are recognised by their region names (MPI_File_*, H5*) and the modules' attributes
// (docs/mpiio.md; hdf5.object, hdf5.chunk_bytes). Memory: per file and dataset, never per event.
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "analysis/model/calls.h"

namespace ezio::analysis {

struct MpiioFileEvidence {
  uint64_t independent = 0, independent_small = 0;  // reads/writes without the COLLECTIVE flag
  uint64_t collective = 0, collective_bytes = 0;
  uint64_t shared = 0, shared_ticks = 0;  // shared-file-pointer calls (_shared, _ordered)
  uint64_t ticks = 0;                     // all MPI-IO reads and writes on it
  std::set<std::string> independent_processes, shared_processes;
  // The system calls' reads/writes inside the collective calls (the aggregators' requests), and
  // the block requests they caused.
  uint64_t aggregated = 0, aggregated_small = 0, aggregated_unaligned = 0;
  uint64_t device = 0, device_small = 0;
};

struct Hdf5DatasetEvidence {
  std::string file;
  uint64_t writes = 0, small_writes = 0, bytes = 0;
  uint64_t chunk_bytes = 0;  // 0: not chunked (or not said)
};

struct Hdf5FileEvidence {
  uint64_t ticks = 0;  // outermost HDF5 calls on it
  uint64_t flushes = 0, flush_ticks = 0;
  uint64_t metadata_writes = 0, metadata_ticks = 0;  // small writes near the start, outside flushes
};

struct HpcEvidence {
  std::map<std::string, MpiioFileEvidence> mpiio;       // by path
  std::map<std::string, Hdf5DatasetEvidence> datasets;  // by "file:object"
  std::map<std::string, Hdf5FileEvidence> hdf5;         // by path
  uint64_t mpiio_ticks = 0;                             // all MPI-IO reads and writes
};

// The sizes the collector classifies by (advise's thresholds).
struct HpcOptions {
  uint64_t mpiio_small_bytes = 1 << 20;
  uint64_t collective_small_bytes = 65536, collective_align_bytes = 4096;
  uint64_t hdf5_small_write_bytes = 65536;
  uint64_t hdf5_metadata_bytes = 4096, hdf5_metadata_region_bytes = 1 << 20;
};

// Fed by the evidence pass (evidence.cpp) as calls complete, innermost first.
class HpcCollector {
 public:
  HpcCollector(HpcEvidence& ev, const HpcOptions& o) : ev_(ev), o_(o) {}
  void begin_location(const std::string& process);
  // A region is entered: MPI-IO and HDF5 calls open a window for the system calls inside them.
  void enter(const RegionInfo& r);
  // A completed application call, with its file's path ("" when none).
  void on_call(const Call& c, const std::string& path);
  // A block request attributed to `call_id`.
  void on_request(const Call& c, uint64_t call_id);

 private:
  void on_mpiio(const Call& c, const std::string& path);
  void on_hdf5(const Call& c, const std::string& path);

  HpcEvidence& ev_;
  HpcOptions o_;
  std::string process_;
  int mpiio_depth_ = 0, hdf5_depth_ = 0;
  bool in_flush_ = false;
  // System calls inside the MPI-IO call being made (counted when it closes, if collective).
  uint64_t sys_ = 0, sys_small_ = 0, sys_unaligned_ = 0;
  std::unordered_set<uint64_t> pending_ids_;
  std::unordered_map<uint64_t, std::string> aggregated_ids_;  // call.id -> file (bounded)
};

bool is_mpiio_region(const std::string& name);
bool is_hdf5_region(const std::string& name);

}  // namespace ezio::analysis
