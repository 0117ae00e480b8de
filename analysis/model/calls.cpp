// SPDX-License-Identifier: GPL-2.0-only
#include "analysis/model/calls.h"

#include "common/error.h"

namespace ezio::analysis {
namespace {

// Ids above this are stored in a map: EZTrace's ids are sparse but small, ours are dense.
constexpr Ref kDenseLimit = 1 << 20;
// Deeper nesting than this only comes from a corrupted trace; refuse it rather than grow forever.
constexpr size_t kMaxDepth = 1 << 16;
// More requests in flight on one device than this only come from a corrupted trace.
constexpr size_t kMaxInFlight = 1 << 20;
// Region ids given to asynchronous requests, which have no region: [block?][read, write, other].
constexpr Ref kRequestRegions = 0xFFFFFF00;

size_t mode_index(OTF2_IoOperationMode mode) {
  return mode == OTF2_IO_OPERATION_MODE_READ ? 0 : mode == OTF2_IO_OPERATION_MODE_WRITE ? 1 : 2;
}

RegionInfo make_info(const RegionDef& def) {
  RegionInfo info;
  info.canonical = def.canonical;
  info.layer = layer_of(def.canonical);
  info.name = std::string(short_name(def.canonical));
  if (is_user_level(info.layer) && !def.name.empty()) info.name = def.name;
  info.op_guess = op_from_name(info.name);
  info.file_io_role = def.role == OTF2_REGION_ROLE_FILE_IO;
  return info;
}

}  // namespace

CallSink::CallSink(const Definitions& defs) : defs_(defs), scope_(defs) {
  unknown_info_.name = unknown_info_.canonical = "<unknown region>";
  for (int block = 0; block < 2; ++block) {
    for (size_t op = 0; op < 3; ++op) {
      RegionInfo& r = request_infos_[block][op];
      static constexpr const char* names[] = {"read", "write", "flush"};
      r.name = names[op];
      r.canonical = block ? std::string("block:") + names[op] : std::string(names[op]) + " (async)";
      r.layer = block ? Layer::kBlock : Layer::kUser;
      r.op_guess = kAllOps[op];
      r.file_io_role = true;
    }
  }
  Ref max_id = 0;
  for (auto& [id, def] : defs.regions) max_id = std::max(max_id, id);
  for (auto& [id, def] : defs.regions) {
    if (id < kDenseLimit && max_id < kDenseLimit) {
      if (dense_info_.size() <= id) {
        dense_info_.resize(id + 1);
        dense_known_.resize(id + 1);
      }
      dense_info_[id] = make_info(def);
      dense_known_[id] = true;
    } else {
      sparse_info_[id] = make_info(def);
    }
  }
}

const RegionInfo& CallSink::region_info(Ref region) {
  if (region >= kRequestRegions && region < kRequestRegions + 6) {
    Ref i = region - kRequestRegions;
    return request_infos_[i / 3][i % 3];
  }
  if (region < dense_known_.size() && dense_known_[region]) return dense_info_[region];
  if (auto it = sparse_info_.find(region); it != sparse_info_.end()) return it->second;
  ++anomalies_.unknown_regions;
  return unknown_info_;
}

void CallSink::begin_location(OTF2_LocationRef loc) {
  location_ = loc;
  scope_.begin_location(loc);
  stack_.clear();
  requests_.clear();
  // Block devices are locations of their own (docs/trace-model.md): their requests are the block
  // layer; a request outside any region elsewhere is asynchronous user-level I/O.
  request_layer_ = defs_.is_device(loc) ? Layer::kBlock : Layer::kUser;
  any_event_ = false;
  first_ = last_ = 0;
}

void CallSink::touch(uint64_t time) {
  if (!any_event_) {
    first_ = last_ = time;
    any_event_ = true;
  } else if (time < last_) {
    ++anomalies_.backwards;
  } else {
    last_ = time;
  }
}

void CallSink::end_location(OTF2_LocationRef loc) {
  while (!stack_.empty()) {
    ++anomalies_.unclosed;
    close_top(last_, nullptr);
  }
  anomalies_.unfinished_requests += requests_.size();
  requests_.clear();
  on_location_done(loc, first_, last_);
}

void CallSink::enter(OTF2_LocationRef, uint64_t time, Ref region, const CallAttributes& attrs) {
  touch(time);
  if (stack_.size() >= kMaxDepth) {
    fail("location {}: calls nested more than {} deep; the trace is corrupted", location_,
         kMaxDepth);
  }
  Frame f;
  f.call.location = location_;
  f.call.region = region;
  f.call.info = &region_info(region);
  f.call.start = time;
  f.attrs = attrs;
  if (!stack_.empty()) f.call.handle = stack_.back().call.handle;
  stack_.push_back(f);
}

void CallSink::close_top(uint64_t time, const CallAttributes* leave_attrs) {
  Frame f = stack_.back();
  stack_.pop_back();
  Call& c = f.call;
  c.end = std::max(time, c.start);
  CallAttributes a = f.attrs;
  if (leave_attrs) {
    if (leave_attrs->has_bytes) a.has_bytes = true, a.bytes = leave_attrs->bytes;
    if (leave_attrs->has_result) a.has_result = true, a.result = leave_attrs->result;
    if (leave_attrs->has_offset) a.has_offset = true, a.offset = leave_attrs->offset;
  }
  if (!f.io_mode_known) c.op = c.info->op_guess;
  if (f.io_completed) {
    c.has_bytes = true;
    c.bytes = f.io_bytes;
  } else if (a.has_result && a.result >= 0 && c.op != Op::kOther) {
    c.has_bytes = true;
    c.bytes = static_cast<uint64_t>(a.result);
  } else if (a.has_result && a.result < 0 && c.op != Op::kOther) {
    // A failed call moved nothing, whatever it asked for (a write on a full disk: -ENOSPC).
    c.has_bytes = true;
    c.bytes = 0;
  } else if (a.has_bytes && c.op != Op::kOther) {  // mmap's length is not data moved
    c.has_bytes = true;
    c.bytes = a.bytes;
  } else if (f.io_mode_known && c.op != Op::kOther) {
    // An operation completed elsewhere (MPI-IO's non-blocking ones, in MPI_Wait): what it asked.
    c.has_bytes = true;
    c.bytes = f.io_requested;
  }
  c.depth = static_cast<uint32_t>(stack_.size());
  c.point = a.point;
  c.call_id = a.call_id;
  c.object = a.object;
  c.layout = a.layout;
  c.chunk_bytes = a.chunk_bytes;
  c.asked = f.io_requested;
  if (a.has_offset && a.offset >= 0) {
    c.has_offset = true;
    c.offset = static_cast<uint64_t>(a.offset);
  }
  c.infrastructure = scope_.thread_call(c.handle, c.op == Op::kWrite,
                                        c.info->name == "mmap" && c.owns_io, c.call_id);
  if (!stack_.empty()) stack_.back().call.children += c.duration();
  on_call(c);
}

void CallSink::leave(OTF2_LocationRef, uint64_t time, Ref region, const CallAttributes& attrs) {
  touch(time);
  if (stack_.empty()) {
    ++anomalies_.unmatched;
    return;
  }
  if (stack_.back().call.region != region) {
    size_t i = stack_.size();
    while (i > 0 && stack_[i - 1].call.region != region) --i;
    if (i == 0) {
      ++anomalies_.unmatched;
      return;
    }
    while (stack_.size() > i) {
      ++anomalies_.misnested;
      close_top(time, nullptr);
    }
  }
  close_top(time, &attrs);
}

void CallSink::attach_handle(Ref handle) {
  if (stack_.empty()) return;
  Call& c = stack_.back().call;
  c.handle = handle;
  c.owns_io = true;
}

void CallSink::io_begin(OTF2_LocationRef, uint64_t time, Ref handle, OTF2_IoOperationMode mode,
                        uint64_t requested, uint64_t matching_id, const CallAttributes& attrs) {
  touch(time);
  if (stack_.empty()) {
    if (requests_.size() >= kMaxInFlight) {
      fail("location {}: more than {} I/O requests in flight; the trace is corrupted", location_,
           kMaxInFlight);
    }
    requests_[matching_id] = Request{time, handle, mode, attrs.pid, attrs.call_id};
    return;
  }
  attach_handle(handle);
  Frame& f = stack_.back();
  f.io_mode_known = true;
  f.io_requested += requested;
  f.call.op = kAllOps[mode_index(mode)];
  f.call.io_flags |= attrs.io_flags;
  // MPI-IO and HDF5 give the offset on the operation, not on the call's ENTER.
  if (attrs.has_offset && !f.attrs.has_offset) {
    f.attrs.has_offset = true;
    f.attrs.offset = attrs.offset;
  }
  if (attrs.object) f.attrs.object = attrs.object;
  if (attrs.layout) f.attrs.layout = attrs.layout;
  if (attrs.chunk_bytes) f.attrs.chunk_bytes = attrs.chunk_bytes;
}

void CallSink::io_complete(OTF2_LocationRef, uint64_t time, Ref handle, uint64_t bytes,
                           uint64_t matching_id) {
  touch(time);
  if (stack_.empty()) {
    auto it = requests_.find(matching_id);
    if (it == requests_.end()) return;
    Request r = it->second;
    requests_.erase(it);
    size_t op = mode_index(r.mode);
    bool block = request_layer_ == Layer::kBlock;
    Call c;
    c.location = location_;
    c.region = kRequestRegions + static_cast<Ref>((block ? 3 : 0) + op);
    c.info = &request_infos_[block][op];
    c.start = r.start;
    c.end = std::max(time, r.start);
    c.op = kAllOps[op];
    c.has_bytes = true;
    c.bytes = bytes;
    c.handle = r.handle;
    c.owns_io = !block;  // a device's position is not a file position
    c.call_id = r.call_id;
    c.infrastructure =
        block && scope_.block_request(r.pid, r.call_id, r.mode == OTF2_IO_OPERATION_MODE_READ);
    on_call(c);
    return;
  }
  attach_handle(handle);
  stack_.back().io_completed = true;
  stack_.back().io_bytes += bytes;
}

void CallSink::io_cancelled(OTF2_LocationRef, uint64_t time, Ref handle, uint64_t matching_id) {
  touch(time);
  if (stack_.empty()) {
    requests_.erase(matching_id);
    return;
  }
  attach_handle(handle);
  // The call failed: it moved nothing, whatever it asked for (a write on a full disk).
  stack_.back().io_completed = true;
}

void CallSink::io_seek(OTF2_LocationRef, uint64_t time, Ref handle, uint64_t offset) {
  touch(time);
  attach_handle(handle);
  on_seek(handle, offset);
}

void CallSink::io_create_handle(OTF2_LocationRef, uint64_t time, Ref handle) {
  touch(time);
  attach_handle(handle);
}

void CallSink::io_destroy_handle(OTF2_LocationRef, uint64_t time, Ref handle) {
  touch(time);
  attach_handle(handle);
}

}  // namespace ezio::analysis
