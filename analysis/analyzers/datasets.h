// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// `eziotrace datasets`: one row per HDF5 dataset (its file and object path, from the hdf5
// module's attributes: docs/hdf5.md) with its H5Dwrite/H5Dread calls, the bytes they asked, the
// time spent in them, and what the layers below did inside them: the MPI-IO, POSIX and system
// calls nested in each transfer (bytes moved), and the block requests those system calls caused
// (their call.id). HDF5 defers much of its I/O (sieve buffer, chunk cache, metadata) to
// H5Dclose/H5Fflush: such bytes lie in those calls, not in the dataset's row (docs/analysis.md).
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analysis/analyzers/options.h"
#include "analysis/analyzers/table.h"
#include "analysis/model/calls.h"

namespace ezio::analysis {

struct DatasetRow {
  std::string file, object;  // object "" for anonymous datasets (H5Dcreate_anon)
  std::string layout;        // hdf5.layout; "" when no transfer said it
  uint64_t chunk_bytes = 0;  // hdf5.chunk_bytes; 0 when not chunked
  bool independent = false, collective = false;  // transfer modes seen
  std::set<std::string> processes;
  uint64_t writes = 0, reads = 0;
  uint64_t asked_write_bytes = 0, asked_read_bytes = 0;
  uint64_t ticks = 0;  // in its H5Dwrite/H5Dread calls
  // Bytes read or written by the calls of each layer inside its transfers.
  uint64_t mpiio_bytes = 0, posix_bytes = 0, syscall_bytes = 0, block_bytes = 0;
  std::string xfer() const;  // independent, collective, mixed
};

// Collects the rows from the calls of a CallSink, fed every call (block requests included).
class DatasetTracker {
 public:
  explicit DatasetTracker(const Definitions& defs) : defs_(defs) {}
  void begin_location(OTF2_LocationRef loc);
  void add(const Call& c);
  // At most this many datasets (the others counted in left_out()), and this many system calls
  // remembered to recognise the block requests they caused (past it, block bytes are lower
  // bounds: blocks_untracked()).
  static constexpr size_t kMaxDatasets = 1 << 16;
  static constexpr size_t kMaxBlockIds = 1 << 18;
  const std::map<std::pair<std::string, std::string>, DatasetRow>& rows() const { return rows_; }
  uint64_t left_out() const { return left_out_; }
  uint64_t blocks_untracked() const { return blocks_untracked_; }
  bool any() const { return !rows_.empty() || left_out_ > 0; }

 private:
  struct Inner {
    uint64_t start;
    Layer layer;
    uint64_t bytes;
    uint64_t call_id;
  };
  void take(const Call& c);

  const Definitions& defs_;
  std::string process_;
  std::vector<Inner> pending_;  // data calls since the last outermost call ended
  std::map<std::pair<std::string, std::string>, DatasetRow> rows_;
  std::unordered_map<uint64_t, DatasetRow*> block_ids_;  // call.id -> its dataset
  uint64_t left_out_ = 0, blocks_untracked_ = 0;
};

// The tracker's rows, by file and object path.
std::vector<DatasetRow> dataset_rows(const DatasetTracker& t);

// Which layers below HDF5 the recording observed, for "not observed" instead of 0.
struct DatasetLayersSeen {
  bool mpiio = false, posix = false, syscall = false, block = false;
};
DatasetLayersSeen dataset_layers_seen(const Definitions& defs);

struct DatasetsOptions {
  CommonOptions common;
};

Report run_datasets(const DatasetsOptions& o);

}  // namespace ezio::analysis
