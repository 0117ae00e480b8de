// SPDX-License-Identifier: GPL-2.0-only
#include "tests/support/synthetic.h"

#include <array>
#include <map>
#include <string>
#include <vector>

#include "common/otf2/writer.h"
#include "common/schema/pagecache.h"

namespace ezio::test {
namespace {

using otf2::ArchiveWriter;
using otf2::EventWriter;
using otf2::Ref;
using otf2::TypedAttribute;

struct Kernel {
  ArchiveWriter& w;
  TypedAttribute fd, bytes, result, offset, call_id;
  Ref paradigm;
  uint64_t next_call = 1;

  explicit Kernel(ArchiveWriter& aw)
      : w(aw),
        fd(w.attribute(schema::syscall::kFd)),
        bytes(w.attribute(schema::syscall::kBytes)),
        result(w.attribute(schema::syscall::kResult)),
        offset(w.attribute(schema::syscall::kOffset)),
        call_id(w.attribute(schema::kCallId)),
        paradigm(w.io_paradigm("linux", "Linux kernel I/O", OTF2_IO_PARADIGM_CLASS_SERIAL,
                               OTF2_IO_PARADIGM_FLAG_OS)) {}

  Ref region(const char* layer, const char* name, bool io) {
    return w.region(name, std::string(layer) + ":" + name,
                    std::string("eziotrace ") + layer + " layer",
                    io ? OTF2_REGION_ROLE_FILE_IO : OTF2_REGION_ROLE_FUNCTION);
  }

  // A syscall moving data: ENTER (attributes), IoOperationBegin, optional nested call, Complete,
  // LEAVE.
  void data_call(const EventWriter& ew, Ref reg, uint64_t t0, uint64_t t1, Ref handle,
                 OTF2_IoOperationMode mode, uint64_t n, int64_t off, Ref nested = 0,
                 uint64_t n0 = 0, uint64_t n1 = 0) {
    auto a = ew.attributes();
    a.add(bytes, n).add(result, static_cast<int64_t>(n));
    if (off >= 0) a.add(offset, off);
    uint64_t id = next_call++;
    a.add(call_id, id);
    ew.enter(t0, reg, a);
    ew.io_operation_begin(t0, handle, mode, OTF2_IO_OPERATION_FLAG_NONE, n, id);
    if (nested) {
      ew.enter(n0, nested);
      ew.leave(n1, nested);
    }
    ew.io_operation_complete(t1, handle, n, id);
    ew.leave(t1, reg);
  }
};

}  // namespace

std::filesystem::path write_basic_archive(const std::filesystem::path& dir,
                                          const std::string& status, const std::string& reason) {
  ArchiveWriter w(dir);
  Kernel k(w);
  Ref node = w.system_tree_node("testhost", "machine");
  for (const char* layer : {"syscall", "vfs", "fs", "pagecache", "block"}) {
    w.system_tree_node_property(node, std::string("EZIOTRACE::LOST::") + layer,
                                uint64_t{std::string(layer) == "syscall" ? 5u : 0u});
  }
  w.system_tree_node_property(node, "EZIOTRACE::STATUS", std::string_view(status));
  if (!reason.empty()) {
    w.system_tree_node_property(node, "EZIOTRACE::STATUS_REASON", std::string_view(reason));
  }
  Ref proc = w.location_group("app [100]", OTF2_LOCATION_GROUP_TYPE_PROCESS, node);
  w.location_group_property(proc, "EZIOTRACE::PID", 100);
  w.location(101, "app [101]", OTF2_LOCATION_TYPE_CPU_THREAD, proc);
  w.location(102, "app [102]", OTF2_LOCATION_TYPE_CPU_THREAD, proc);
  w.location_property(101, "EZIOTRACE::TID", 101);
  w.location_property(102, "EZIOTRACE::TID", 102);
  Ref dev = w.location_group("block sda", OTF2_LOCATION_GROUP_TYPE_PROCESS, node);
  const OTF2_LocationRef dev_loc = (uint64_t{1} << 32) | 1;
  w.location(dev_loc, "block sda", OTF2_LOCATION_TYPE_CPU_THREAD, dev);

  Ref file_a = w.io_file("/data/a", node), file_b = w.io_file("/data/b", node);
  Ref ha = w.io_handle("/data/a [pid 100 fd 3]", file_a, k.paradigm);
  Ref hb = w.io_handle("/data/b [pid 100 fd 4]", file_b, k.paradigm);

  Ref openat = k.region("syscall", "openat", false), write = k.region("syscall", "write", true);
  Ref pread = k.region("syscall", "pread64", true), close = k.region("syscall", "close", false);
  Ref vfs_write = k.region("vfs", "vfs_write", true);

  EventWriter e = w.event_writer(101);
  e.enter(1000, openat);
  e.io_create_handle(1100, ha, OTF2_IO_ACCESS_MODE_READ_WRITE, OTF2_IO_CREATION_FLAG_CREATE,
                     OTF2_IO_STATUS_FLAG_NONE);
  e.leave(1100, openat);
  k.data_call(e, write, 2000, 2400, ha, OTF2_IO_OPERATION_MODE_WRITE, 4096, -1, vfs_write, 2100,
              2300);
  k.data_call(e, write, 3000, 3200, ha, OTF2_IO_OPERATION_MODE_WRITE, 4096, -1);
  k.data_call(e, write, 4000, 4100, ha, OTF2_IO_OPERATION_MODE_WRITE, 100, -1);
  // A file-system tracepoint inside the pread: a zero-length region marked fs.point.
  Ref fs_read = k.region("fs", "xfs_file_buffered_read", true);
  TypedAttribute fs_bytes = w.attribute(schema::fs::kBytes);
  TypedAttribute fs_point = w.attribute(schema::fs::kPoint);
  e.enter(5000, pread, e.attributes().add(k.bytes, 8192).add(k.result, 8192).add(k.offset, 0));
  e.io_operation_begin(5000, ha, OTF2_IO_OPERATION_MODE_READ, OTF2_IO_OPERATION_FLAG_NONE, 8192,
                       99);
  e.enter(5100, fs_read, e.attributes().add(fs_bytes, 8192).add(fs_point, 1));
  e.leave(5100, fs_read);
  e.io_operation_complete(5800, ha, 8192, 99);
  e.leave(5800, pread);
  e.enter(6000, close);
  e.io_destroy_handle(6050, ha);
  e.leave(6050, close);

  k.data_call(w.event_writer(102), write, 1000, 1600, hb, OTF2_IO_OPERATION_MODE_WRITE, 1000, -1);

  // A block request: asynchronous I/O operation on the device's handle, no region.
  Ref dev_handle = w.io_handle("/dev/sda", w.io_file("/dev/sda", node), k.paradigm,
                               OTF2_IO_HANDLE_FLAG_PRE_CREATED);
  TypedAttribute blk_sector = w.attribute(schema::block::kSector);
  EventWriter d = w.event_writer(dev_loc);
  d.io_operation_begin(2500, dev_handle, OTF2_IO_OPERATION_MODE_WRITE,
                       OTF2_IO_OPERATION_FLAG_NON_BLOCKING, 4096, 1,
                       d.attributes().add(blk_sector, 2048));
  d.io_operation_issued(2600, dev_handle, 1);
  d.io_operation_complete(3500, dev_handle, 4096, 1);

  // Page-cache counters of process 100 (docs/trace-model.md): Metric events on its METRIC
  // location, each a thread's sample (its totals as attributes, accumulated from the start, so
  // its last one holds them) with the process's pages absorbed (hits + dirtied) as the member.
  const OTF2_LocationRef pc_loc = uint64_t{3} << 32;
  w.location(pc_loc, "pagecache app [100]", OTF2_LOCATION_TYPE_METRIC, proc);
  w.location_property(pc_loc, "EZIOTRACE::PID", uint64_t{100});
  std::vector<TypedAttribute> counters;
  for (const char* m : {"hits", "misses", "dirtied"}) {
    std::string name = std::string(schema::pagecache::kThreadCounterPrefix) + m;
    counters.push_back(w.attribute({name, "pages", OTF2_TYPE_UINT64}));
  }
  TypedAttribute pc_tid = w.attribute(schema::pagecache::kTid);
  Ref pc_class =
      w.metric_class({w.metric_member("pagecache.absorbed", "pages", OTF2_METRIC_TYPE_OTHER,
                                      OTF2_METRIC_ACCUMULATED_START, OTF2_TYPE_UINT64, "pages")},
                     OTF2_METRIC_ASYNCHRONOUS, OTF2_RECORDER_KIND_ABSTRACT);
  EventWriter pc = w.event_writer(pc_loc);
  std::map<uint64_t, uint64_t> absorbed;  // by thread
  for (auto [t, tid, hits, misses, dirtied] :
       {std::array<uint64_t, 5>{2000, 101, 10, 2, 1}, std::array<uint64_t, 5>{4000, 102, 4, 0, 2},
        std::array<uint64_t, 5>{6000, 101, 30, 10, 5}}) {
    auto a = pc.attributes();
    a.add(pc_tid, tid);
    uint64_t now[3] = {hits, misses, dirtied};
    for (size_t i = 0; i < 3; ++i) a.add(counters[i], now[i]);
    absorbed[tid] = hits + dirtied;
    uint64_t v = 0;
    for (auto& [thread, pages] : absorbed) v += pages;
    pc.metric(t, pc_class, v, a);
  }

  otf2::Clock clock;
  clock.global_offset = 1000;
  clock.trace_length = 5050;
  w.clock(clock);
  w.close();
  return w.anchor();
}

std::filesystem::path write_empty_archive(const std::filesystem::path& dir) {
  ArchiveWriter w(dir);
  Ref node = w.system_tree_node("testhost", "machine");
  Ref proc = w.location_group("app [1]", OTF2_LOCATION_GROUP_TYPE_PROCESS, node);
  w.location(1, "app [1]", OTF2_LOCATION_TYPE_CPU_THREAD, proc);
  w.region("write", "syscall:write", "eziotrace syscall layer", OTF2_REGION_ROLE_FILE_IO);
  w.close();
  return w.anchor();
}

}  // namespace ezio::test
