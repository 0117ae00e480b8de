// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Turns a location's ENTER/LEAVE and I/O events into completed calls: one Call per region
// instance, with its exclusive time, bytes moved, file handle and layer. Only the call stack of
// the location being read is kept, so memory is bounded by the nesting depth.
#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/model/layer.h"
#include "analysis/model/process_role.h"
#include "analysis/model/trace_reader.h"

namespace ezio::analysis {

struct RegionInfo {
  std::string name;  // short name: "write" for "syscall:write"
  std::string canonical;
  Layer layer = Layer::kUser;
  Op op_guess = Op::kOther;  // from the name
  bool file_io_role = false;
};

struct Call {
  OTF2_LocationRef location = 0;
  Ref region = 0;
  const RegionInfo* info = nullptr;
  uint64_t start = 0, end = 0;  // ticks
  uint64_t children = 0;        // ticks spent in nested calls of the same location
  Op op = Op::kOther;
  uint64_t bytes = 0;  // bytes moved (result), or requested if no result is known
  bool has_bytes = false;
  Ref handle = OTF2_UNDEFINED_IO_HANDLE;  // own or inherited from the enclosing call
  bool owns_io = false;                   // the I/O events were inside this call (not inherited)
  bool has_offset = false;
  uint64_t offset = 0;   // explicit offset of the access, when given
  bool point = false;    // a tracepoint without duration (fs.point): counted, but not timed
  uint64_t call_id = 0;  // call.id of a kernel call (block requests refer to it), 0 if none
  uint32_t depth = 0;    // calls open around it on its location when it ended (0: outermost)
  // The flags of its I/O operations, or'ed (OTF2_IO_OPERATION_FLAG_COLLECTIVE: MPI-IO, HDF5).
  uint32_t io_flags = 0;
  const std::string* object = nullptr;  // hdf5.object: an HDF5 call's dataset or attribute
  const std::string* layout = nullptr;  // hdf5.layout: contiguous, chunked, compact, virtual
  uint64_t chunk_bytes = 0;             // hdf5.chunk_bytes
  uint64_t asked = 0;                   // bytes its I/O operations asked for (IoOperationBegin)
  // Not the application's data: a launcher's, or start-up and system files (process_role.h).
  bool infrastructure = false;
  bool is_io() const { return owns_io || handle != OTF2_UNDEFINED_IO_HANDLE; }
  uint64_t duration() const { return end > start ? end - start : 0; }
  uint64_t exclusive() const { return duration() > children ? duration() - children : 0; }
};

// Counters of trace defects met while pairing events; reported as warnings.
struct Anomalies {
  uint64_t unclosed = 0;   // ENTER without LEAVE at the end of a location (closed at its end)
  uint64_t unmatched = 0;  // LEAVE without a matching ENTER (ignored)
  uint64_t misnested = 0;  // LEAVE of an outer region: inner calls closed at that time
  uint64_t backwards = 0;  // timestamps going back within a location (durations clamped)
  uint64_t unknown_regions = 0;
  uint64_t unfinished_requests = 0;  // asynchronous requests never completed (dropped)
};

class CallSink : public EventSink {
 public:
  explicit CallSink(const Definitions& defs);

  // Called for every completed call, innermost first.
  virtual void on_call(const Call& call) = 0;
  // Called when a location has been read, with its first and last timestamps (0,0 if empty).
  virtual void on_location_done(OTF2_LocationRef, uint64_t /*first*/, uint64_t /*last*/) {}
  // A seek on a handle (lseek), for sequential-access tracking.
  virtual void on_seek(Ref /*handle*/, uint64_t /*offset*/) {}

  const Anomalies& anomalies() const { return anomalies_; }
  const Definitions& defs() const { return defs_; }
  const RegionInfo& region_info(Ref region);
  // Who is who in the recording: launcher, ranks, helpers (process_role.h).
  const ProcessRoles& roles() const { return scope_.roles(); }

  void begin_location(OTF2_LocationRef loc) override;
  void end_location(OTF2_LocationRef loc) override;
  void enter(OTF2_LocationRef, uint64_t time, Ref region, const CallAttributes&) override;
  void leave(OTF2_LocationRef, uint64_t time, Ref region, const CallAttributes&) override;
  void io_begin(OTF2_LocationRef, uint64_t time, Ref handle, OTF2_IoOperationMode mode,
                uint64_t bytes, uint64_t matching_id, const CallAttributes&) override;
  void io_complete(OTF2_LocationRef, uint64_t time, Ref handle, uint64_t bytes,
                   uint64_t matching_id) override;
  void io_cancelled(OTF2_LocationRef, uint64_t time, Ref handle, uint64_t matching_id) override;
  void io_seek(OTF2_LocationRef, uint64_t time, Ref handle, uint64_t offset) override;
  void io_create_handle(OTF2_LocationRef, uint64_t time, Ref handle) override;
  void io_destroy_handle(OTF2_LocationRef, uint64_t time, Ref handle) override;

 private:
  struct Frame {
    Call call;
    CallAttributes attrs;  // from ENTER
    bool io_mode_known = false;
    bool io_completed = false;
    uint64_t io_bytes = 0;
    uint64_t io_requested = 0;  // bytes its operations asked for (IoOperationBegin)
  };
  void touch(uint64_t time);
  void attach_handle(Ref handle);
  void close_top(uint64_t time, const CallAttributes* leave_attrs);

  // An I/O operation outside any region: a block request (or another asynchronous request),
  // timed from its begin to its completion; requests overlap, so they are paired by matching id.
  struct Request {
    uint64_t start;
    Ref handle;
    OTF2_IoOperationMode mode;
    uint64_t pid, call_id;  // block.pid, call.id: whose request, for its scope
  };
  const RegionInfo& request_info(OTF2_IoOperationMode mode);

  const Definitions& defs_;
  IoScopeClassifier scope_;
  std::unordered_map<uint64_t, Request> requests_;  // in flight on the location being read
  Layer request_layer_ = Layer::kUser;
  std::array<RegionInfo, 3> request_infos_[2];  // [is block][read, write, other]
  std::vector<RegionInfo> dense_info_;          // by region id when ids are small
  std::vector<bool> dense_known_;
  std::map<Ref, RegionInfo> sparse_info_;
  RegionInfo unknown_info_;
  std::vector<Frame> stack_;
  OTF2_LocationRef location_ = 0;
  uint64_t first_ = 0, last_ = 0;
  bool any_event_ = false;
  Anomalies anomalies_;
};

}  // namespace ezio::analysis
