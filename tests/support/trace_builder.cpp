// SPDX-License-Identifier: GPL-2.0-only
#include "tests/support/trace_builder.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/schema/attributes.h"
#include "common/schema/pagecache.h"

namespace ezio::test {

using otf2::EventWriter;
using otf2::Ref;

namespace {
constexpr uint64_t kPid = 100;
constexpr OTF2_LocationRef kDevice = (uint64_t{1} << 32) | 1;
constexpr OTF2_LocationRef kPageCache = uint64_t{3} << 32;
}  // namespace

TraceBuilder::TraceBuilder(const std::filesystem::path& dir)
    : w_(dir),
      node_(w_.system_tree_node("testhost", "machine")),
      process_(w_.location_group(fmt::format("app [{}]", kPid), OTF2_LOCATION_GROUP_TYPE_PROCESS,
                                 node_)),
      paradigm_(w_.io_paradigm("linux", "Linux kernel I/O", OTF2_IO_PARADIGM_CLASS_SERIAL,
                               OTF2_IO_PARADIGM_FLAG_OS)),
      bytes_(w_.attribute(schema::syscall::kBytes)),
      result_(w_.attribute(schema::syscall::kResult)),
      offset_(w_.attribute(schema::syscall::kOffset)),
      call_id_(w_.attribute(schema::kCallId)),
      sector_(w_.attribute(schema::block::kSector)),
      queue_(w_.attribute(schema::block::kQueueNs)),
      service_(w_.attribute(schema::block::kServiceNs)),
      pc_tid_(w_.attribute(schema::pagecache::kTid)),
      pid_attr_(w_.attribute(schema::block::kPid)),
      mpiio_offset_(
          w_.attribute({"mpiio.offset", "byte offset through the view", OTF2_TYPE_INT64})),
      hdf5_object_(w_.attribute({"hdf5.object", "object path", OTF2_TYPE_STRING})),
      hdf5_chunk_(w_.attribute({"hdf5.chunk_bytes", "chunk size", OTF2_TYPE_UINT64})) {
  w_.location_group_property(process_, "EZIOTRACE::PID", kPid);
}

TraceBuilder::~TraceBuilder() = default;

Ref TraceBuilder::file(const std::string& path, int fd) {
  return w_.io_handle(fmt::format("{} [pid {} fd {}]", path, kPid, fd), w_.io_file(path, node_),
                      paradigm_);
}

Ref TraceBuilder::inherited(int fd) {
  std::string path =
      fmt::format("<fd {} of pid {}: opened before tracing, or by a call not traced>", fd, kPid);
  return w_.io_handle(fmt::format("{} [pid {} fd {}]", path, kPid, fd), w_.io_file(path, node_),
                      paradigm_, OTF2_IO_HANDLE_FLAG_PRE_CREATED);
}

void TraceBuilder::process(uint64_t pid, uint64_t ppid, const std::string& comm,
                           std::initializer_list<uint64_t> tids) {
  Ref g =
      w_.location_group(fmt::format("{} [{}]", comm, pid), OTF2_LOCATION_GROUP_TYPE_PROCESS, node_);
  w_.location_group_property(g, "EZIOTRACE::PID", pid);
  w_.location_group_property(g, "EZIOTRACE::PPID", ppid);
  for (uint64_t tid : tids) tid_group_[tid] = g;
}

OTF2_LocationRef TraceBuilder::thread(uint64_t tid) {
  if (!events_.contains(tid)) {
    auto g = tid_group_.find(tid);
    w_.location(tid, fmt::format("app [{}]", tid), OTF2_LOCATION_TYPE_CPU_THREAD,
                g == tid_group_.end() ? process_ : g->second);
    w_.location_property(tid, "EZIOTRACE::TID", tid);
    events_[tid];
  }
  return tid;
}

Ref TraceBuilder::region(std::string_view layer, std::string_view name, bool io) {
  std::string canonical = layer.empty() ? std::string(name) : fmt::format("{}:{}", layer, name);
  auto it = regions_.find(canonical);
  if (it != regions_.end()) return it->second;
  Ref r =
      w_.region(name, canonical,
                layer.empty() ? std::string("EZTrace") : fmt::format("eziotrace {} layer", layer),
                io ? OTF2_REGION_ROLE_FILE_IO : OTF2_REGION_ROLE_FUNCTION);
  return regions_[canonical] = r;
}

void TraceBuilder::at(OTF2_LocationRef loc, uint64_t time, Emit e) {
  events_[loc].push_back({time, seq_++, std::move(e)});
  last_time_ = std::max(last_time_, time);
}

uint64_t TraceBuilder::rw(uint64_t tid, uint64_t t0, uint64_t t1, Ref file, bool write,
                          uint64_t bytes, int64_t offset) {
  OTF2_LocationRef loc = thread(tid);
  const char* name = offset >= 0 ? (write ? "pwrite64" : "pread64") : (write ? "write" : "read");
  Ref reg = region("syscall", name, true);
  uint64_t id = next_call_++;
  auto mode = write ? OTF2_IO_OPERATION_MODE_WRITE : OTF2_IO_OPERATION_MODE_READ;
  at(loc, t0, [=, this](const EventWriter& e) {
    auto a = e.attributes();
    a.add(bytes_, bytes).add(result_, static_cast<int64_t>(bytes)).add(call_id_, id);
    if (offset >= 0) a.add(offset_, offset);
    e.enter(t0, reg, a);
    e.io_operation_begin(t0, file, mode, OTF2_IO_OPERATION_FLAG_NONE, bytes, id);
  });
  at(loc, t1, [=](const EventWriter& e) {
    e.io_operation_complete(t1, file, bytes, id);
    e.leave(t1, reg);
  });
  return id;
}

void TraceBuilder::open(uint64_t tid, uint64_t t0, uint64_t t1, Ref file) {
  OTF2_LocationRef loc = thread(tid);
  Ref reg = region("syscall", "openat", false);
  at(loc, t0, [=](const EventWriter& e) { e.enter(t0, reg); });
  at(loc, t1, [=](const EventWriter& e) {
    e.io_create_handle(t1, file, OTF2_IO_ACCESS_MODE_READ_WRITE, OTF2_IO_CREATION_FLAG_NONE,
                       OTF2_IO_STATUS_FLAG_NONE);
    e.leave(t1, reg);
  });
}

void TraceBuilder::call(uint64_t tid, std::string_view name, uint64_t t0, uint64_t t1, Ref file) {
  OTF2_LocationRef loc = thread(tid);
  Ref reg = region("syscall", name, false);
  bool flush = file != OTF2_UNDEFINED_IO_HANDLE && (name == "fsync" || name == "fdatasync");
  uint64_t id = next_call_++;
  at(loc, t0, [=](const EventWriter& e) {
    e.enter(t0, reg);
    if (flush) {
      e.io_operation_begin(t0, file, OTF2_IO_OPERATION_MODE_FLUSH, OTF2_IO_OPERATION_FLAG_NONE, 0,
                           id);
    }
  });
  at(loc, t1, [=](const EventWriter& e) {
    if (flush) e.io_operation_complete(t1, file, 0, id);
    e.leave(t1, reg);
  });
}

void TraceBuilder::fwrite(uint64_t tid, uint64_t t0, uint64_t t1, Ref file, uint64_t bytes,
                          bool with_syscall) {
  OTF2_LocationRef loc = thread(tid);
  Ref reg = region("", "fwrite", true);
  uint64_t id = next_call_++;
  at(loc, t0, [=](const EventWriter& e) {
    e.enter(t0, reg);
    e.io_operation_begin(t0, file, OTF2_IO_OPERATION_MODE_WRITE, OTF2_IO_OPERATION_FLAG_NONE, bytes,
                         id);
  });
  if (with_syscall) rw(tid, t0 + 1, t1 - 1, file, true, bytes);
  at(loc, t1, [=](const EventWriter& e) {
    e.io_operation_complete(t1, file, bytes, id);
    e.leave(t1, reg);
  });
}

void TraceBuilder::user_io(uint64_t tid, uint64_t t0, uint64_t t1, Ref file, const UserIo& io) {
  OTF2_LocationRef loc = thread(tid);
  Ref reg = region("", io.name, true);
  uint64_t id = next_call_++;
  std::string object = io.object;
  Ref object_ref = object.empty() ? 0 : w_.string(object);
  at(loc, t0, [=, this](const EventWriter& e) {
    e.enter(t0, reg);
    auto a = e.attributes();
    if (io.offset >= 0) a.add(mpiio_offset_, io.offset);
    if (!object.empty()) a.add_string(hdf5_object_, object_ref);
    if (io.chunk_bytes) a.add(hdf5_chunk_, io.chunk_bytes);
    e.io_operation_begin(t0, file, io.mode, io.flags, io.bytes, id, a);
  });
  uint64_t bytes = io.bytes;
  at(loc, t1, [=](const EventWriter& e) {
    e.io_operation_complete(t1, file, bytes, id);
    e.leave(t1, reg);
  });
}

void TraceBuilder::throttle(uint64_t tid, uint64_t t0, uint64_t t1) {
  OTF2_LocationRef loc = thread(tid);
  Ref reg = region("pagecache", "balance_dirty_pages", false);
  at(loc, t0, [=](const EventWriter& e) { e.enter(t0, reg); });
  at(loc, t1, [=](const EventWriter& e) { e.leave(t1, reg); });
}

void TraceBuilder::block(uint64_t t0, uint64_t t1, bool write, uint64_t bytes, uint64_t sector,
                         uint64_t call_id, uint64_t queue_ns, uint64_t service_ns) {
  if (!device_) {
    Ref group = w_.location_group("block sda", OTF2_LOCATION_GROUP_TYPE_PROCESS, node_);
    w_.location(kDevice, "block sda", OTF2_LOCATION_TYPE_CPU_THREAD, group);
    device_handle_ = w_.io_handle("/dev/sda", w_.io_file("/dev/sda", node_), paradigm_,
                                  OTF2_IO_HANDLE_FLAG_PRE_CREATED);
    device_ = true;
  }
  uint64_t id = next_call_++;
  Ref h = device_handle_;
  uint64_t pid = block_pid_;
  auto mode = write ? OTF2_IO_OPERATION_MODE_WRITE : OTF2_IO_OPERATION_MODE_READ;
  at(kDevice, t0, [=, this](const EventWriter& e) {
    auto a = e.attributes();
    a.add(sector_, sector).add(queue_, queue_ns).add(service_, service_ns);
    if (call_id) a.add(call_id_, call_id);
    if (pid) a.add(pid_attr_, pid);
    e.io_operation_begin(t0, h, mode, OTF2_IO_OPERATION_FLAG_NON_BLOCKING, bytes, id, a);
  });
  at(kDevice, t1, [=](const EventWriter& e) { e.io_operation_complete(t1, h, bytes, id); });
}

void TraceBuilder::pagecache(uint64_t t, uint64_t tid, uint64_t hits, uint64_t misses) {
  if (!pc_location_) {
    w_.location(kPageCache, fmt::format("pagecache app [{}]", kPid), OTF2_LOCATION_TYPE_METRIC,
                process_);
    w_.location_property(kPageCache, "EZIOTRACE::PID", kPid);
    for (const char* m : {"hits", "misses"}) {
      std::string name = std::string(schema::pagecache::kThreadCounterPrefix) + m;
      pc_counters_.push_back(w_.attribute({name, "pages", OTF2_TYPE_UINT64}));
    }
    pc_class_ = w_.metric_class(
        {w_.metric_member("pagecache.absorbed", "pages", OTF2_METRIC_TYPE_OTHER,
                          OTF2_METRIC_ACCUMULATED_START, OTF2_TYPE_UINT64, "pages")},
        OTF2_METRIC_ASYNCHRONOUS, OTF2_RECORDER_KIND_ABSTRACT);
    pc_location_ = true;
  }
  absorbed_[tid] = hits;
  uint64_t v = 0;
  for (auto& [thread, pages] : absorbed_) v += pages;
  at(kPageCache, t, [=, this](const EventWriter& e) {
    auto a = e.attributes();
    a.add(pc_tid_, tid).add(pc_counters_[0], hits).add(pc_counters_[1], misses);
    e.metric(t, pc_class_, v, a);
  });
}

std::filesystem::path TraceBuilder::close() {
  w_.system_tree_node_property(node_, "EZIOTRACE::STATUS", std::string_view(status_));
  for (auto& [name, value] : strings_)
    w_.system_tree_node_property(node_, name, std::string_view(value));
  // The syscall layer recorded, as the recorder says it: the analyzers take it as the
  // application's layer. The other layers are observed where they have events.
  w_.system_tree_node_property(node_, "EZIOTRACE::PROBE::syscall",
                               std::string_view("tp_btf/sys_enter+sys_exit (exact)"));
  for (const char* layer : {"syscall", "vfs", "fs", "pagecache", "block"}) {
    w_.system_tree_node_property(node_, std::string("EZIOTRACE::LOST::") + layer,
                                 lost_.contains(layer) ? lost_[layer] : uint64_t{0});
  }
  for (auto& [loc, events] : events_) {
    std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
      return a.time != b.time ? a.time < b.time : a.seq < b.seq;
    });
    EventWriter e = w_.event_writer(loc);
    for (const Event& ev : events) ev.emit(e);
  }
  otf2::Clock clock;
  clock.global_offset = 0;
  clock.trace_length = last_time_ + 1;
  w_.clock(clock);
  w_.close();
  return w_.anchor();
}

}  // namespace ezio::test
