// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/archive/block_archive.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "common/otf2/check.h"
#include "common/schema/properties.h"
#include "recorder/core/device_use.h"

namespace ezio::recorder {
namespace {

// enum req_op and enum req_flag_bits (include/linux/blk_types.h). Operation numbers are ABI of
// the block layer since 4.10; the flag bits moved over the years, so the BPF side sends the raw
// word and only the bits stable since 5.x are named here.
constexpr uint32_t kOpMask = 0xff;
constexpr uint32_t kReqSync = 1u << 11, kReqMeta = 1u << 12, kReqFua = 1u << 17,
                   kReqPreflush = 1u << 18;

bool is_read(uint32_t f) { return (f & kOpMask) == 0; }
bool is_write(uint32_t f) { return (f & kOpMask) == 1; }

OTF2_IoOperationMode io_mode(uint32_t f) {
  if (is_read(f)) return OTF2_IO_OPERATION_MODE_READ;
  if ((f & kOpMask) == 2) return OTF2_IO_OPERATION_MODE_FLUSH;
  return OTF2_IO_OPERATION_MODE_WRITE;  // write, discard, write-zeroes: data changes on the device
}

const char* cause_name(uint32_t cause) {
  switch (cause) {
    case EZIO_CAUSE_SUBMITTER:
      return "submitter";
    case EZIO_CAUSE_DIRTIER:
      return "writeback";
    case EZIO_CAUSE_FLUSH:
      return "flush";
    default:
      return "none";
  }
}

}  // namespace

const char* block_op_name(uint32_t f) {
  switch (f & kOpMask) {
    case 0:
      return "read";
    case 1:
      return "write";
    case 2:
      return "flush";
    case 3:
      return "discard";
    case 5:
      return "secure-erase";
    case 9:
      return "write-zeroes";
    default:
      return "other";
  }
}

std::string block_flag_names(uint32_t f) {
  std::vector<const char*> names;
  if (f & kReqSync) names.push_back("sync");
  if (f & kReqMeta) names.push_back("meta");
  if (f & kReqFua) names.push_back("fua");
  if (f & kReqPreflush) names.push_back("preflush");
  return fmt::format("{}", fmt::join(names, ","));
}

struct BlockLayer::Device {
  std::string name;
  uint64_t location = 0;
  otf2::Ref handle = 0;
  uint64_t next_id = 0;
  uint64_t last = 0;  // time of the last event written
  std::vector<PendingEvent> pending;
  size_t sorted = 0;  // pending[0, sorted) is in time order: events of earlier batches
};

// One of a request's three events, waiting to be written in time order.
struct BlockLayer::PendingEvent {
  uint64_t t;
  int kind;  // 0 begin, 1 issued, 2 complete
  uint64_t id;
  ezio_block_rec r;
};

BlockLayer::BlockLayer(otf2::ArchiveWriter& w, otf2::Ref machine, ArchiveSummary& summary)
    : w_(w), machine_(machine), summary_(summary) {}

BlockLayer::~BlockLayer() = default;

BlockLayer::Device& BlockLayer::device(uint32_t dev, std::string_view kernel_name) {
  auto [it, added] = devices_.try_emplace(dev);
  Device& d = it->second;
  if (!added) return d;
  if (!defined_) define_common();
  d.name = device_name(dev, kernel_name);
  d.location = (uint64_t(1) << 32) | (devices_.size() - 1);
  otf2::Ref file = w_.io_file(fmt::format("/dev/{}", d.name), machine_);
  d.handle = w_.io_handle(fmt::format("/dev/{}", d.name), file, paradigm_,
                          OTF2_IO_HANDLE_FLAG_PRE_CREATED);
  return d;
}

void BlockLayer::define_common() {
  defined_ = true;
  namespace block = schema::block;
  a_ = {w_.attribute(block::kPid),     w_.attribute(block::kTid),
        w_.attribute(schema::kCallId), w_.attribute(block::kSector),
        w_.attribute(block::kQueueNs), w_.attribute(block::kServiceNs),
        w_.attribute(block::kOp),      w_.attribute(block::kFlags),
        w_.attribute(block::kCause),   w_.attribute(block::kSharedBytes)};
  paradigm_ = w_.io_paradigm("linux", "Linux kernel I/O", OTF2_IO_PARADIGM_CLASS_SERIAL,
                             OTF2_IO_PARADIGM_FLAG_OS);
}

void BlockLayer::add(std::vector<ezio_block_rec>&& requests) {
  for (const auto& r : requests) {
    Device& d = device(r.dev, std::string_view(r.disk, strnlen(r.disk, sizeof(r.disk))));
    uint64_t issue = std::max<uint64_t>(r.t_issue, r.t_queue);
    uint64_t id = d.next_id++;
    d.pending.push_back({r.t_queue, 0, id, r});
    d.pending.push_back({issue, 1, id, r});
    d.pending.push_back({std::max<uint64_t>(r.t_complete, issue), 2, id, r});
  }
}

void BlockLayer::write_before(uint64_t t) {
  for (auto& [dev, d] : devices_) {
    // Requests overlap on a device: their events are written in time order. The events held back
    // by earlier batches are sorted already: only the new ones are, then merged in.
    auto before = [](const PendingEvent& x, const PendingEvent& y) {
      return x.t != y.t ? x.t < y.t : x.kind < y.kind;
    };
    auto old_end = d.pending.begin() + static_cast<std::ptrdiff_t>(d.sorted);
    std::stable_sort(old_end, d.pending.end(), before);
    std::inplace_merge(d.pending.begin(), old_end, d.pending.end(), before);
    auto end = std::partition_point(d.pending.begin(), d.pending.end(),
                                    [t](const PendingEvent& e) { return e.t < t; });
    if (end != d.pending.begin()) {
      otf2::EventWriter evt = w_.event_writer(d.location);
      for (auto e = d.pending.begin(); e != end; ++e) write(d, evt, *e);
    }
    d.pending.erase(d.pending.begin(), end);
    d.sorted = d.pending.size();
  }
}

void BlockLayer::write(Device& d, const otf2::EventWriter& evt, const PendingEvent& e) {
  const ezio_block_rec& r = e.r;
  // A request that took longer than the caller's horizon arrives after later events were
  // written: its first events move to that time (its queue and service times stay exact).
  uint64_t t = std::max(e.t, d.last);
  d.last = t;
  last_ = std::max(last_, t);
  if (e.kind == 0) {
    otf2::EventAttributes al = evt.attributes();
    al.add(a_.pid, r.h.pid)
        .add(a_.tid, r.h.tid)
        .add(a_.call_id, r.call_id)
        .add(a_.sector, r.sector)
        .add(a_.queue_ns, r.t_issue > r.t_queue ? r.t_issue - r.t_queue : 0)
        .add(a_.service_ns, r.t_complete > r.t_issue ? r.t_complete - r.t_issue : 0)
        .add_string(a_.op, block_op_name(r.cmd_flags))
        .add_string(a_.flags, block_flag_names(r.cmd_flags))
        .add_string(a_.cause, cause_name(r.cause))
        .add(a_.shared_bytes, r.shared_bytes);
    evt.io_operation_begin(t, d.handle, io_mode(r.cmd_flags), OTF2_IO_OPERATION_FLAG_NON_BLOCKING,
                           r.bytes, e.id, al);
    return;
  }
  if (e.kind == 1) {
    evt.io_operation_issued(t, d.handle, e.id);
    return;
  }
  evt.io_operation_complete(t, d.handle, r.error == 0 ? r.bytes : 0, e.id);
  auto& totals = summary_.layers[EZIO_LAYER_BLOCK];
  ++totals.events;
  totals.time_ns += r.t_complete > r.t_issue ? r.t_complete - r.t_issue : 0;
  if (is_read(r.cmd_flags)) {
    ++totals.reads;
    totals.bytes_read += r.bytes;
  } else if (is_write(r.cmd_flags)) {
    ++totals.writes;
    totals.bytes_written += r.bytes;
  } else {
    ++totals.other;
  }
}

namespace {

// The device's values of the node's table at the session's start and end, when the kernel said
// which table it was.
void write_window(otf2::ArchiveWriter& w, OTF2_LocationRef location,
                  const UnattributedWindow& window, uint32_t dev) {
  if (window.table == 0) return;
  auto at = [dev](const std::map<uint32_t, UnattributedIo>& table) {
    auto it = table.find(dev);
    return it == table.end() ? UnattributedIo{} : it->second;
  };
  const UnattributedIo start = at(window.start), end = at(window.end);
  w.location_property(location, schema::kUnattributedTable, window.table);
  w.location_property(location, schema::kUnattributedRequestsAtStart, start.requests);
  w.location_property(location, schema::kUnattributedRequestsAtEnd, end.requests);
  w.location_property(location, schema::kUnattributedBytesAtStart, start.bytes);
  w.location_property(location, schema::kUnattributedBytesAtEnd, end.bytes);
  w.location_property(location, schema::kNotIssuedRequestsAtStart, start.not_issued);
  w.location_property(location, schema::kNotIssuedRequestsAtEnd, end.not_issued);
  if (start.device_read && end.device_read) {
    w.location_property(location, schema::kDeviceRequestsAtStart, start.device);
    w.location_property(location, schema::kDeviceRequestsAtEnd, end.device);
    w.location_property(location, schema::kDeviceBytesAtStart, start.device_bytes);
    w.location_property(location, schema::kDeviceBytesAtEnd, end.device_bytes);
  }
}

}  // namespace

uint64_t BlockLayer::finish(const DeviceUse& use) {
  write_before(UINT64_MAX);
  for (uint32_t dev : use.used) device(dev, "");
  for (auto& [dev, d] : devices_) {
    std::string label = fmt::format("block {}", d.name);
    otf2::Ref group = w_.location_group(label, OTF2_LOCATION_GROUP_TYPE_PROCESS, machine_);
    w_.location(d.location, label, OTF2_LOCATION_TYPE_CPU_THREAD, group);
    w_.location_property(d.location, schema::kDevMajor, dev_major(dev));
    w_.location_property(d.location, schema::kDevMinor, dev_minor(dev));
    UnattributedIo un;
    if (auto it = use.unattributed.find(dev); it != use.unattributed.end()) un = it->second;
    w_.location_property(d.location, schema::kUnattributedRequests, un.requests);
    w_.location_property(d.location, schema::kUnattributedBytes, un.bytes);
    w_.location_property(d.location, schema::kNotIssuedRequests, un.not_issued);
    write_window(w_, d.location, use.window, dev);
    w_.system_tree_node_property(machine_, schema::unattributed_property(d.name), un.requests);
    w_.system_tree_node_property(machine_, schema::not_issued_property(d.name), un.not_issued);
    summary_.unattributed[d.name] = un;
  }
  return last_;
}

}  // namespace ezio::recorder
