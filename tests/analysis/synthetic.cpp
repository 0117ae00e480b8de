#include "tests/analysis/synthetic.h"

#include <array>
#include <map>
#include <string>
#include <vector>

#include "common/otf2/check.h"
#include "common/otf2/writer.h"

namespace ezio::test {
namespace {

using otf2::ArchiveWriter;
using otf2::check;
using otf2::Ref;

struct Kernel {
  ArchiveWriter& w;
  Ref fd, bytes, result, offset, call_id;
  Ref paradigm;
  uint64_t next_call = 1;

  explicit Kernel(ArchiveWriter& aw)
      : w(aw),
        fd(w.attribute("syscall.fd", "fd argument", OTF2_TYPE_INT64)),
        bytes(w.attribute("syscall.bytes", "bytes requested", OTF2_TYPE_UINT64)),
        result(w.attribute("syscall.result", "return value", OTF2_TYPE_INT64)),
        offset(w.attribute("syscall.offset", "explicit offset", OTF2_TYPE_INT64)),
        call_id(w.attribute("call.id", "call id", OTF2_TYPE_UINT64)),
        paradigm(w.io_paradigm("linux", "Linux kernel I/O", OTF2_IO_PARADIGM_CLASS_SERIAL,
                               OTF2_IO_PARADIGM_FLAG_OS)) {}

  Ref region(const char* layer, const char* name, bool io) {
    return w.region(name, std::string(layer) + ":" + name,
                    std::string("eziotrace ") + layer + " layer",
                    io ? OTF2_REGION_ROLE_FILE_IO : OTF2_REGION_ROLE_FUNCTION);
  }

  // A syscall moving data: ENTER (attributes), IoOperationBegin, optional nested call, Complete,
  // LEAVE.
  void data_call(OTF2_EvtWriter* ew, Ref reg, uint64_t t0, uint64_t t1, Ref handle,
                 OTF2_IoOperationMode mode, uint64_t n, int64_t off, Ref nested = 0,
                 uint64_t n0 = 0, uint64_t n1 = 0) {
    auto* a = w.attributes();
    check(OTF2_AttributeList_AddUint64(a, bytes, n), "attr");
    check(OTF2_AttributeList_AddInt64(a, result, static_cast<int64_t>(n)), "attr");
    if (off >= 0) check(OTF2_AttributeList_AddInt64(a, offset, off), "attr");
    uint64_t id = next_call++;
    check(OTF2_AttributeList_AddUint64(a, call_id, id), "attr");
    check(OTF2_EvtWriter_Enter(ew, a, t0, reg), "enter");
    check(OTF2_EvtWriter_IoOperationBegin(ew, nullptr, t0, handle, mode,
                                          OTF2_IO_OPERATION_FLAG_NONE, n, id),
          "begin");
    if (nested) {
      check(OTF2_EvtWriter_Enter(ew, nullptr, n0, nested), "enter");
      check(OTF2_EvtWriter_Leave(ew, nullptr, n1, nested), "leave");
    }
    check(OTF2_EvtWriter_IoOperationComplete(ew, nullptr, t1, handle, n, id), "complete");
    check(OTF2_EvtWriter_Leave(ew, nullptr, t1, reg), "leave");
  }
};

}  // namespace

std::filesystem::path write_basic_archive(const std::filesystem::path& dir) {
  ArchiveWriter w(dir);
  Kernel k(w);
  Ref node = w.system_tree_node("testhost", "machine");
  for (const char* layer : {"syscall", "vfs", "fs", "pagecache", "block"}) {
    w.system_tree_node_property(node, std::string("EZIOTRACE::LOST::") + layer,
                                uint64_t{std::string(layer) == "syscall" ? 5u : 0u});
  }
  w.system_tree_node_property(node, "EZIOTRACE::STATUS", std::string_view("complete"));
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

  OTF2_EvtWriter* e = w.events(101);
  check(OTF2_EvtWriter_Enter(e, nullptr, 1000, openat), "enter");
  check(OTF2_EvtWriter_IoCreateHandle(e, nullptr, 1100, ha, OTF2_IO_ACCESS_MODE_READ_WRITE,
                                      OTF2_IO_CREATION_FLAG_CREATE, OTF2_IO_STATUS_FLAG_NONE),
        "create");
  check(OTF2_EvtWriter_Leave(e, nullptr, 1100, openat), "leave");
  k.data_call(e, write, 2000, 2400, ha, OTF2_IO_OPERATION_MODE_WRITE, 4096, -1, vfs_write, 2100,
              2300);
  k.data_call(e, write, 3000, 3200, ha, OTF2_IO_OPERATION_MODE_WRITE, 4096, -1);
  k.data_call(e, write, 4000, 4100, ha, OTF2_IO_OPERATION_MODE_WRITE, 100, -1);
  // A file-system tracepoint inside the pread: a zero-length region marked fs.point.
  Ref fs_read = k.region("fs", "xfs_file_buffered_read", true);
  Ref fs_bytes = w.attribute("fs.bytes", "length asked for", OTF2_TYPE_INT64);
  Ref fs_point = w.attribute("fs.point", "1: a single tracepoint", OTF2_TYPE_UINT8);
  {
    auto* a = w.attributes();
    check(OTF2_AttributeList_AddUint64(a, k.bytes, 8192), "attr");
    check(OTF2_AttributeList_AddInt64(a, k.result, 8192), "attr");
    check(OTF2_AttributeList_AddInt64(a, k.offset, 0), "attr");
    check(OTF2_EvtWriter_Enter(e, a, 5000, pread), "enter");
    check(OTF2_EvtWriter_IoOperationBegin(e, nullptr, 5000, ha, OTF2_IO_OPERATION_MODE_READ,
                                          OTF2_IO_OPERATION_FLAG_NONE, 8192, 99),
          "begin");
    check(OTF2_AttributeList_AddInt64(a, fs_bytes, 8192), "attr");
    check(OTF2_AttributeList_AddUint8(a, fs_point, 1), "attr");
    check(OTF2_EvtWriter_Enter(e, a, 5100, fs_read), "enter");
    check(OTF2_EvtWriter_Leave(e, nullptr, 5100, fs_read), "leave");
    check(OTF2_EvtWriter_IoOperationComplete(e, nullptr, 5800, ha, 8192, 99), "complete");
    check(OTF2_EvtWriter_Leave(e, nullptr, 5800, pread), "leave");
  }
  check(OTF2_EvtWriter_Enter(e, nullptr, 6000, close), "enter");
  check(OTF2_EvtWriter_IoDestroyHandle(e, nullptr, 6050, ha), "destroy");
  check(OTF2_EvtWriter_Leave(e, nullptr, 6050, close), "leave");

  k.data_call(w.events(102), write, 1000, 1600, hb, OTF2_IO_OPERATION_MODE_WRITE, 1000, -1);

  // A block request: asynchronous I/O operation on the device's handle, no region.
  Ref dev_handle = w.io_handle("/dev/sda", w.io_file("/dev/sda", node), k.paradigm,
                               OTF2_IO_HANDLE_FLAG_PRE_CREATED);
  Ref blk_sector = w.attribute("block.sector", "first sector", OTF2_TYPE_UINT64);
  OTF2_EvtWriter* d = w.events(dev_loc);
  check(OTF2_AttributeList_AddUint64(w.attributes(), blk_sector, 2048), "attr");
  check(OTF2_EvtWriter_IoOperationBegin(d, w.attributes(), 2500, dev_handle,
                                        OTF2_IO_OPERATION_MODE_WRITE,
                                        OTF2_IO_OPERATION_FLAG_NON_BLOCKING, 4096, 1),
        "begin");
  check(OTF2_EvtWriter_IoOperationIssued(d, nullptr, 2600, dev_handle, 1), "issued");
  check(OTF2_EvtWriter_IoOperationComplete(d, nullptr, 3500, dev_handle, 4096, 1), "complete");

  // Page-cache counters of process 100 (docs/trace-model.md): Metric events on its METRIC
  // location, each a thread's sample (its totals as attributes, accumulated from the start, so
  // its last one holds them) with the process's pages absorbed (hits + dirtied) as the member.
  const OTF2_LocationRef pc_loc = uint64_t{3} << 32;
  w.location(pc_loc, "pagecache app [100]", OTF2_LOCATION_TYPE_METRIC, proc);
  w.location_property(pc_loc, "EZIOTRACE::PID", uint64_t{100});
  std::vector<Ref> counters;
  for (const char* m : {"hits", "misses", "dirtied"}) {
    counters.push_back(
        w.attribute(std::string("pagecache.thread.") + m, "pages", OTF2_TYPE_UINT64));
  }
  Ref pc_tid = w.attribute("pagecache.tid", "thread", OTF2_TYPE_UINT64);
  Ref pc_class =
      w.metric_class({w.metric_member("pagecache.absorbed", "pages", OTF2_METRIC_TYPE_OTHER,
                                      OTF2_METRIC_ACCUMULATED_START, OTF2_TYPE_UINT64, "pages")},
                     OTF2_METRIC_ASYNCHRONOUS, OTF2_RECORDER_KIND_ABSTRACT);
  OTF2_EvtWriter* pc = w.events(pc_loc);
  const OTF2_Type type = OTF2_TYPE_UINT64;
  std::map<uint64_t, uint64_t> absorbed;  // by thread
  for (auto [t, tid, hits, misses, dirtied] :
       {std::array<uint64_t, 5>{2000, 101, 10, 2, 1}, std::array<uint64_t, 5>{4000, 102, 4, 0, 2},
        std::array<uint64_t, 5>{6000, 101, 30, 10, 5}}) {
    auto* a = w.attributes();
    check(OTF2_AttributeList_AddUint64(a, pc_tid, tid), "attr");
    uint64_t now[3] = {hits, misses, dirtied};
    for (size_t i = 0; i < 3; ++i) {
      check(OTF2_AttributeList_AddUint64(a, counters[i], now[i]), "attr");
    }
    absorbed[tid] = hits + dirtied;
    OTF2_MetricValue v;
    v.unsigned_int = 0;
    for (auto& [thread, pages] : absorbed) v.unsigned_int += pages;
    check(OTF2_EvtWriter_Metric(pc, a, t, pc_class, 1, &type, &v), "metric");
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
