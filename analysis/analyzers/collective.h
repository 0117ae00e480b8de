// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// `eziotrace collective`: two-phase collective I/O made visible. MPI-IO's collective calls
// (COLLECTIVE flag: _all, _at_all, _ordered, split collectives) are matched across ranks (the
// n-th collective call of each process on a file is one collective operation, as MPI requires
// every rank of the communicator to make them in the same order); for each, what each rank asked
// for (bytes, byte offset through its view) and the POSIX and system calls each rank made inside
// its own call: ROMIO's aggregators write the data of every rank there. Each rank's asked byte
// range is set against the aggregators' system-call ranges to say who wrote it (docs/analysis.md).
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "analysis/analyzers/options.h"
#include "analysis/analyzers/table.h"
#include "analysis/model/calls.h"

namespace ezio::analysis {

// One rank's part of a collective operation: its MPI-IO call and the data calls inside it.
struct CollectivePart {
  std::string process;          // the rank's location group
  std::string function;         // MPI_File_write_at_all...
  uint64_t start = 0, end = 0;  // ticks
  uint64_t asked = 0;           // bytes of its MPI-IO operation
  bool has_offset = false;
  uint64_t offset = 0;                            // mpiio.offset: byte offset through the view
  uint64_t posix_calls = 0, posix_bytes = 0;      // EZTrace's POSIX reads/writes inside
  uint64_t syscall_calls = 0, syscall_bytes = 0;  // the kernel's read/write system calls inside
  // File byte ranges [begin, end) its data calls inside moved, sorted and merged: from the system
  // calls with an offset, else from the POSIX calls with one.
  std::vector<std::pair<uint64_t, uint64_t>> extents;
};

struct CollectiveOp {
  std::string file;
  uint64_t index = 0;  // the n-th collective operation on this file (from 1)
  Op op = Op::kOther;
  std::vector<CollectivePart> parts;  // one per rank, in the order their locations were read
};

// Bytes of rank `asker`'s asked range that `writer`'s data calls moved (0 without an offset).
uint64_t covered_bytes(const CollectivePart& asker, const CollectivePart& writer);

// Collects the collective operations from the calls of a CallSink (feed it every call).
class CollectiveTracker {
 public:
  explicit CollectiveTracker(const Definitions& defs) : defs_(defs) {}
  void begin_location(OTF2_LocationRef loc);
  void add(const Call& c);
  // At most this many operations are kept (in order); the others are counted in left_out().
  static constexpr size_t kMaxOps = 4096;
  const std::vector<CollectiveOp>& ops() const { return ops_; }
  uint64_t left_out() const { return left_out_; }

 private:
  struct DataCall {
    uint64_t start;
    Layer layer;
    Op op;
    uint64_t bytes;
    bool has_offset;
    uint64_t offset;
  };
  void take(const Call& c);

  const Definitions& defs_;
  std::string process_;
  std::vector<DataCall> pending_;  // data calls since the last outermost call ended
  std::map<std::pair<std::string, std::string>, uint64_t> seen_;  // (process, file) -> count
  std::map<std::pair<std::string, uint64_t>, size_t> index_;      // (file, n) -> ops_
  std::vector<CollectiveOp> ops_;
  uint64_t left_out_ = 0;
};

struct CollectiveOptions {
  CommonOptions common;
};

Report run_collective(const CollectiveOptions& o);

}  // namespace ezio::analysis
