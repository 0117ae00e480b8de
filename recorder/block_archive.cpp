#include "recorder/block_archive.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "common/otf2/check.h"
#include "recorder/device_use.h"

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

struct Device {
  std::string name;
  std::vector<const ezio_block_rec*> requests;
};

struct Attrs {
  otf2::Ref pid, tid, call_id, sector, queue_ns, service_ns, op, flags, cause;
};

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

uint64_t write_block_layer(otf2::ArchiveWriter& w, otf2::Ref machine, const RecordStore& store,
                           ArchiveSummary& summary) {
  const DeviceUse& use = store.devices();
  std::map<uint32_t, Device> devices;
  for (const auto& r : store.block_requests()) {
    Device& d = devices[r.dev];
    if (d.name.empty())
      d.name = device_name(r.dev, std::string(r.disk, strnlen(r.disk, sizeof(r.disk))));
    d.requests.push_back(&r);
  }
  for (uint32_t dev : use.used) {
    Device& d = devices[dev];
    if (d.name.empty()) d.name = device_name(dev, "");
  }
  if (devices.empty()) return 0;

  Attrs a{w.attribute("block.pid", "process the request is attributed to", OTF2_TYPE_UINT64),
          w.attribute("block.tid", "thread the request is attributed to", OTF2_TYPE_UINT64),
          w.attribute("call.id", "id of the call in this recording", OTF2_TYPE_UINT64),
          w.attribute("block.sector", "first sector (512 bytes)", OTF2_TYPE_UINT64),
          w.attribute("block.queue_ns", "creation to issue to the driver, ns", OTF2_TYPE_UINT64),
          w.attribute("block.service_ns", "issue to completion, ns", OTF2_TYPE_UINT64),
          w.attribute("block.op", "read, write, flush, discard, …", OTF2_TYPE_STRING),
          w.attribute("block.flags", "sync, meta, fua, preflush", OTF2_TYPE_STRING),
          w.attribute("block.cause",
                      "submitter (the thread created it), writeback (pages it dirtied), flush",
                      OTF2_TYPE_STRING)};
  otf2::Ref paradigm = w.io_paradigm("linux", "Linux kernel I/O", OTF2_IO_PARADIGM_CLASS_SERIAL,
                                     OTF2_IO_PARADIGM_FLAG_OS);
  auto& totals = summary.layers[EZIO_LAYER_BLOCK];
  uint64_t last = 0;
  uint64_t n = 0;
  for (auto& [dev, d] : devices) {
    std::string label = fmt::format("block {}", d.name);
    otf2::Ref group = w.location_group(label, OTF2_LOCATION_GROUP_TYPE_PROCESS, machine);
    uint64_t loc = (uint64_t(1) << 32) | n++;
    w.location(loc, label, OTF2_LOCATION_TYPE_CPU_THREAD, group);
    w.location_property(loc, "EZIOTRACE::DEV_MAJOR", dev_major(dev));
    w.location_property(loc, "EZIOTRACE::DEV_MINOR", dev_minor(dev));
    UnattributedIo un;
    if (auto it = use.unattributed.find(dev); it != use.unattributed.end()) un = it->second;
    w.location_property(loc, "EZIOTRACE::UNATTRIBUTED_REQUESTS", un.requests);
    w.location_property(loc, "EZIOTRACE::UNATTRIBUTED_BYTES", un.bytes);
    w.system_tree_node_property(machine, fmt::format("EZIOTRACE::UNATTRIBUTED::{}", d.name),
                                un.requests);
    summary.unattributed[d.name] = un;
    otf2::Ref file = w.io_file(fmt::format("/dev/{}", d.name), machine);
    otf2::Ref handle = w.io_handle(fmt::format("/dev/{}", d.name), file, paradigm,
                                   OTF2_IO_HANDLE_FLAG_PRE_CREATED);

    // Requests overlap on a device: their three events are written in time order.
    struct Ev {
      uint64_t t;
      int kind;  // 0 begin, 1 issued, 2 complete
      uint64_t id;
      const ezio_block_rec* r;
    };
    std::vector<Ev> evs;
    evs.reserve(d.requests.size() * 3);
    uint64_t id = 0;
    for (const ezio_block_rec* r : d.requests) {
      uint64_t issue = std::max<uint64_t>(r->t_issue, r->t_queue);
      evs.push_back({r->t_queue, 0, id, r});
      evs.push_back({issue, 1, id, r});
      evs.push_back({std::max<uint64_t>(r->t_complete, issue), 2, id, r});
      ++id;
    }
    std::stable_sort(evs.begin(), evs.end(), [](const Ev& x, const Ev& y) {
      return x.t != y.t ? x.t < y.t : x.kind < y.kind;
    });
    OTF2_EvtWriter* evt = w.events(loc);
    for (const Ev& e : evs) {
      const ezio_block_rec& r = *e.r;
      if (e.kind == 0) {
        OTF2_AttributeList* al = w.attributes();
        OTF2_AttributeList_AddUint64(al, a.pid, r.h.pid);
        OTF2_AttributeList_AddUint64(al, a.tid, r.h.tid);
        OTF2_AttributeList_AddUint64(al, a.call_id, r.call_id);
        OTF2_AttributeList_AddUint64(al, a.sector, r.sector);
        OTF2_AttributeList_AddUint64(al, a.queue_ns,
                                     r.t_issue > r.t_queue ? r.t_issue - r.t_queue : 0);
        OTF2_AttributeList_AddUint64(al, a.service_ns,
                                     r.t_complete > r.t_issue ? r.t_complete - r.t_issue : 0);
        OTF2_AttributeList_AddStringRef(al, a.op, w.string(block_op_name(r.cmd_flags)));
        OTF2_AttributeList_AddStringRef(al, a.flags, w.string(block_flag_names(r.cmd_flags)));
        OTF2_AttributeList_AddStringRef(al, a.cause, w.string(cause_name(r.cause)));
        otf2::written(OTF2_EvtWriter_IoOperationBegin(evt, al, e.t, handle, io_mode(r.cmd_flags),
                                                      OTF2_IO_OPERATION_FLAG_NON_BLOCKING, r.bytes,
                                                      e.id));
      } else if (e.kind == 1) {
        otf2::written(OTF2_EvtWriter_IoOperationIssued(evt, nullptr, e.t, handle, e.id));
      } else {
        otf2::written(OTF2_EvtWriter_IoOperationComplete(evt, nullptr, e.t, handle,
                                                         r.error == 0 ? r.bytes : 0, e.id));
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
      last = std::max(last, e.t);
    }
  }
  return last;
}

}  // namespace ezio::recorder
