// SPDX-License-Identifier: GPL-2.0-only
#include "analysis/analyzers/evidence.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "analysis/analyzers/access_pattern.h"
#include "analysis/analyzers/svg.h"
#include "analysis/analyzers/table.h"
#include "analysis/analyzers/trace_run.h"
#include "common/schema/properties.h"

namespace ezio::analysis {
namespace {

constexpr uint64_t kPage = 4096;
// Misaligned writes remembered to match the block reads they caused (8 bytes each); past this the
// read-modify-write count is a lower bound (docs/analysis.md).
constexpr size_t kMaxRememberedWrites = 1 << 20;
constexpr size_t kMaxChildren = 8, kMaxPath = 14;
constexpr size_t kMaxSyncMarks = 2000;
// The recorder's dirty-throttling pauses (docs/kernel-layers.md, Page cache).
constexpr std::string_view kThrottleRegion = "pagecache:balance_dirty_pages";

bool in(std::string_view name, std::initializer_list<std::string_view> names) {
  return std::find(names.begin(), names.end(), name) != names.end();
}
bool is_open(std::string_view n) {
  return in(n, {"open", "openat", "openat2", "creat", "fopen", "fopen64", "open64"});
}
bool is_metadata(std::string_view n) {
  return is_open(n) ||
         in(n, {"close",      "close_range", "stat",     "lstat",    "fstat",      "newfstatat",
                "newstat",    "newlstat",    "newfstat", "statx",    "access",     "faccessat",
                "faccessat2", "unlink",      "unlinkat", "rename",   "renameat",   "renameat2",
                "mkdir",      "mkdirat",     "rmdir",    "getdents", "getdents64", "readlink",
                "readlinkat", "chmod",       "fchmod",   "fchmodat", "chown",      "fchown",
                "fchownat",   "utimensat",   "fclose",   "statfs",   "fstatfs"});
}
bool is_sync(std::string_view n) {
  return in(n, {"fsync", "fdatasync", "sync_file_range", "msync", "syncfs", "sync"});
}
// Buffered user-level calls: the C library gathers them into fewer system calls.
bool is_stdio(std::string_view n) {
  return in(n, {"fwrite", "fread", "fputs", "fputc", "fprintf", "vfprintf", "fgets", "fgetc",
                "fscanf", "putc", "getc", "fwrite_unlocked", "fread_unlocked"});
}

class EvidenceSink : public CallSink {
 public:
  EvidenceSink(const Definitions& defs, Evidence& ev, const EvidenceOptions& o)
      : CallSink(defs),
        ev_(ev),
        o_(o),
        collectives_(defs),
        datasets_(defs),
        hpc_(ev.hpc, o.hpc),
        hosts_(defs) {
    bool syscalls = layer_observation(defs, Layer::kSyscall, false).observed;
    app_layer_ = syscalls ? Layer::kSyscall : Layer::kUser;
    auto probe = defs.node_string_properties.find(schema::probe_property("pagecache"));
    ev_.dirty_throttle_observed = probe != defs.node_string_properties.end() &&
                                  probe->second.find("balance_dirty_pages") != std::string::npos;
    for (auto& [id, r] : defs.regions) {
      if (r.canonical == kThrottleRegion) ev_.dirty_throttle_observed = true;
    }
  }

  void begin_location(OTF2_LocationRef loc) override {
    CallSink::begin_location(loc);
    collectives_.begin_location(loc);
    datasets_.begin_location(loc);
    hosts_.begin_location(loc);
    const LocationDef* d = defs().location(loc);
    std::string name = d && !d->name.empty() ? d->name : fmt::format("location {}", loc);
    device_ = nullptr;
    thread_ = nullptr;
    if (defs().is_device(loc)) {
      device_ = &devices_[name];
      device_->name = name;
      depth_ = depth_since_ = 0;
      last_sector_end_ = UINT64_MAX;
      pending_.clear();
    } else {
      thread_ = &threads_[loc];
      thread_->name = name;
    }
    children_.clear();
    stdio_syscalls_ = 0;
    hpc_.begin_location(defs().process_of(loc));
  }

  void enter(OTF2_LocationRef loc, uint64_t time, Ref region, const CallAttributes& a) override {
    CallSink::enter(loc, time, region, a);
    if (region_info(region).layer == Layer::kUser) stdio_syscalls_ = 0;
    hpc_.enter(region_info(region));
  }

  void io_begin(OTF2_LocationRef loc, uint64_t time, Ref handle, OTF2_IoOperationMode mode,
                uint64_t bytes, uint64_t matching_id, const CallAttributes& a) override {
    if (device_) {
      pending_[matching_id] = a;
      depth_change(time, +1);
    }
    CallSink::io_begin(loc, time, handle, mode, bytes, matching_id, a);
  }
  void io_complete(OTF2_LocationRef loc, uint64_t time, Ref handle, uint64_t bytes,
                   uint64_t matching_id) override {
    if (!device_) return CallSink::io_complete(loc, time, handle, bytes, matching_id);
    auto it = pending_.find(matching_id);
    if (it == pending_.end()) return CallSink::io_complete(loc, time, handle, bytes, matching_id);
    completing_depth_ = depth_;
    depth_change(time, -1);
    request_ = &it->second;
    CallSink::io_complete(loc, time, handle, bytes, matching_id);
    request_ = nullptr;
    pending_.erase(it);
  }
  void io_cancelled(OTF2_LocationRef loc, uint64_t time, Ref handle,
                    uint64_t matching_id) override {
    if (device_ && pending_.erase(matching_id)) depth_change(time, -1);
    CallSink::io_cancelled(loc, time, handle, matching_id);
  }

  void on_seek(Ref handle, uint64_t offset) override { positions_[handle].seek(offset); }

  void on_call(const Call& c) override {
    collectives_.add(c);
    datasets_.add(c);
    if (c.info->canonical == kThrottleRegion) return on_throttle(c);
    if (!counts_as_io(c)) return;
    if (c.infrastructure && !o_.all) return on_infrastructure(c);
    hosts_.add(c);
    Layer l = c.info->layer;
    ev_.layers[static_cast<size_t>(l)].add(c, 1e9 * ev_.tick_s);
    size_t b = ev_.timeline.bin(c.end);
    ev_.timeline.ops[static_cast<size_t>(l)][b] += 1;
    if (c.has_bytes && c.op != Op::kOther) ev_.timeline.bytes[static_cast<size_t>(l)][b] += c.bytes;
    if (device_) return on_request(c);
    hpc_.on_call(c, path_of(c.handle));  // MPI-IO and HDF5 calls, and the syscalls in them
    if (l == Layer::kVfs || l == Layer::kFs) {
      if (children_.size() < kMaxChildren) children_.push_back(c);
      return;
    }
    if (l == Layer::kSyscall && c.op != Op::kOther) ++stdio_syscalls_;
    if (l == Layer::kUser && is_stdio(c.info->name)) on_stdio(c);
    if (l == app_layer_) on_app_call(c);
    if (l == Layer::kSyscall) children_.clear();
  }

  void pagecache(OTF2_LocationRef loc, uint64_t, const PageCacheSample& s) override {
    if (!o_.all && roles().of_location(loc) == ProcessRole::kLauncher) return;
    take_pagecache_sample(loc, s, pagecache_);
  }

  void on_location_done(OTF2_LocationRef, uint64_t first, uint64_t last) override {
    if (first == 0 && last == 0) return;
    if (thread_) thread_->first = first, thread_->last = last;
    if (ev_.first == 0 || first < ev_.first) ev_.first = first;
    ev_.last = std::max(ev_.last, last);
  }

  void finish();
  const std::vector<CollectiveOp>& collectives() const { return collectives_.ops(); }
  const DatasetTracker& datasets() const { return datasets_; }

 private:
  void depth_change(uint64_t time, int delta);
  void on_request(const Call& c);
  void on_app_call(const Call& c);
  void on_stdio(const Call& c);
  void on_throttle(const Call& c);
  void on_infrastructure(const Call& c);
  void record_slow(const Call& c, const std::string& file);
  FileEvidence& file(Ref handle);
  const std::string& path_of(Ref handle);

  Evidence& ev_;
  const EvidenceOptions& o_;
  CollectiveTracker collectives_;
  DatasetTracker datasets_;
  Layer app_layer_;
  std::map<std::string, DeviceEvidence> devices_;
  std::map<OTF2_LocationRef, ThreadEvidence> threads_;
  std::map<std::string, FileEvidence> files_;
  std::unordered_map<Ref, FileEvidence*> by_handle_;
  std::unordered_map<Ref, AccessPosition> positions_;
  PageCacheThreads pagecache_;
  std::unordered_set<uint64_t> misaligned_ids_;
  DeviceEvidence* device_ = nullptr;
  ThreadEvidence* thread_ = nullptr;
  std::unordered_map<uint64_t, CallAttributes> pending_;  // block requests in flight
  const CallAttributes* request_ = nullptr;               // of the request being completed
  uint64_t depth_ = 0, depth_since_ = 0, last_sector_end_ = UINT64_MAX;
  uint64_t completing_depth_ = 0;  // requests in flight when the current one completed
  std::vector<Call> children_;     // VFS/FS calls of the syscall being closed
  uint64_t stdio_syscalls_ = 0;
  HpcCollector hpc_;
  HostTally hosts_;
  std::unordered_map<Ref, std::string> paths_;
};

const std::string& EvidenceSink::path_of(Ref handle) {
  static const std::string none;
  if (handle == OTF2_UNDEFINED_IO_HANDLE) return none;
  auto it = paths_.find(handle);
  if (it == paths_.end()) it = paths_.emplace(handle, defs().handle_path(handle)).first;
  return it->second;
}

FileEvidence& EvidenceSink::file(Ref handle) {
  auto it = by_handle_.find(handle);
  if (it != by_handle_.end()) return *it->second;
  std::string path = defs().handle_path(handle);
  FileEvidence& f = files_[path];
  f.path = path;
  by_handle_.emplace(handle, &f);
  return f;
}

void EvidenceSink::depth_change(uint64_t time, int delta) {
  DeviceEvidence& d = *device_;
  if (time > depth_since_ && depth_since_ != 0) {
    d.depth_ticks += static_cast<double>(depth_) * static_cast<double>(time - depth_since_);
    if (depth_ > 0) d.busy_ticks += time - depth_since_;
  }
  depth_since_ = time;
  if (delta < 0 && depth_ == 0) return;
  depth_ = delta > 0 ? depth_ + 1 : depth_ - 1;
  d.max_depth = std::max(d.max_depth, depth_);
  uint64_t& bin_max = ev_.timeline.max_depth[ev_.timeline.bin(time)];
  bin_max = std::max(bin_max, depth_);
}

void EvidenceSink::on_request(const Call& c) {
  DeviceEvidence& d = *device_;
  d.requests.add(c, 1e9 * ev_.tick_s);
  if (!request_ || c.op == Op::kOther) return;
  const CallAttributes& a = *request_;
  if (a.call_id) hpc_.on_request(c, a.call_id);
  d.queue_ns += a.queue_ns;
  d.service_ns += a.service_ns;
  if (completing_depth_ <= 1 && c.bytes) {
    ++d.lone_count, d.lone_ns += a.service_ns, d.lone_bytes += c.bytes;
  } else if (completing_depth_ >= o_.crowded_depth && c.bytes) {
    ++d.crowded_count, d.crowded_ns += a.service_ns, d.crowded_bytes += c.bytes;
  }
  d.access.sizes.add(c.bytes);
  if (c.bytes < o_.small_request_bytes) ++d.access.small;
  if (c.op == Op::kWrite) ++d.access.writes;
  if (a.has_sector) {
    ++(a.sector == last_sector_end_ ? d.access.sequential : d.access.random);
    last_sector_end_ = a.sector + c.bytes / 512;
  }
  if (c.op == Op::kRead && a.call_id && misaligned_ids_.contains(a.call_id)) {
    ++d.reads_in_writes;
    d.reads_in_writes_bytes += c.bytes;
  }
  if (!a.call_id) return;
  for (SlowCall& s : ev_.slowest) {
    if (s.call_id != a.call_id || s.path.size() >= kMaxPath) continue;
    s.path.push_back(fmt::format("block {} {} on {}: queued {}, served {}", op_name(c.op),
                                 human_bytes(c.bytes), d.name.substr(6), ns_label(a.queue_ns),
                                 ns_label(a.service_ns)));
  }
}

void EvidenceSink::on_app_call(const Call& c) {
  ThreadEvidence& t = *thread_;
  std::string_view name = c.info->name;
  uint64_t d = c.point ? 0 : c.duration();
  ++t.io_calls;
  t.io_ticks += d;
  if (c.info->layer == Layer::kSyscall) ev_.syscall_io_ticks += d;
  if (is_metadata(name)) ++ev_.metadata.count, ev_.metadata.ticks += d;
  if (is_sync(name)) {
    ++ev_.syncs.count;
    ev_.syncs.ticks += d;
    if (ev_.timeline.syncs.size() < kMaxSyncMarks) ev_.timeline.syncs.push_back(c.start);
  }
  auto& busy = ev_.timeline.thread_busy[t.name];
  size_t b0 = ev_.timeline.bin(c.start), b1 = ev_.timeline.bin(c.end);
  for (size_t b = b0; b <= b1; ++b)
    busy[b] += static_cast<double>(d) / static_cast<double>(b1 - b0 + 1);
  std::string path;
  if (c.handle != OTF2_UNDEFINED_IO_HANDLE) {
    FileEvidence& f = file(c.handle);
    path = f.path;
    f.syscall.add(c, 1e9 * ev_.tick_s);
    ++f.threads[t.name];
    if (is_open(name)) ++f.opens;
    if (is_sync(name)) ++f.syncs, f.sync_ticks += d;
    if (c.owns_io && c.has_bytes && c.op != Op::kOther) {
      AccessPosition& pos = positions_[c.handle];
      uint64_t start = pos.start_of(c);
      ++(pos.sequential(c) ? f.access.sequential : f.access.random);
      f.access.sizes.add(c.bytes);
      if (c.bytes < o_.small_request_bytes) ++f.access.small;
      if (c.op == Op::kWrite) {
        ++f.access.writes;
        if (start % kPage != 0 || c.bytes % kPage != 0) {
          ++f.access.misaligned_writes;
          if (c.call_id && misaligned_ids_.size() < kMaxRememberedWrites)
            misaligned_ids_.insert(c.call_id);
        }
      }
    }
  }
  if (c.has_bytes && c.op != Op::kOther) {
    t.bytes += c.bytes;
    if (!c.point && c.info->layer == Layer::kSyscall)
      t.sci[c.op == Op::kRead ? 0 : 1].add(c.duration(), true, c.bytes);
  }
  record_slow(c, path);
}

void EvidenceSink::record_slow(const Call& c, const std::string& file) {
  auto& s = ev_.slowest;
  uint64_t d = c.duration();
  if (c.point || (s.size() >= o_.slowest && d <= s.back().ticks) || o_.slowest == 0) return;
  SlowCall sc;
  sc.ticks = d;
  sc.start = c.start;
  sc.thread = thread_->name;
  sc.name = c.info->canonical;
  sc.file = file;
  sc.bytes = c.has_bytes ? c.bytes : 0;
  sc.call_id = c.call_id;
  for (const Call& ch : children_) {
    sc.path.push_back(
        fmt::format("{} {}", ch.info->canonical,
                    ch.point ? "(point)" : human_seconds(ev_.seconds(ch.duration()))));
  }
  auto at = std::upper_bound(s.begin(), s.end(), d,
                             [](uint64_t v, const SlowCall& x) { return v > x.ticks; });
  s.insert(at, std::move(sc));
  if (s.size() > o_.slowest) s.pop_back();
}

// A pause of a writer by the dirty-page limits: per thread, per file (the call it interrupted),
// and over time. Not an I/O call of the page-cache layer: the funnel counts pages there.
void EvidenceSink::on_throttle(const Call& c) {
  uint64_t d = c.duration();
  ++ev_.dirty_throttle_count;
  ev_.dirty_throttle_ticks += d;
  ev_.dirty_pauses_ns.add(static_cast<uint64_t>(ev_.seconds(d) * 1e9));
  if (thread_) ++thread_->throttles, thread_->throttle_ticks += d;
  if (c.handle != OTF2_UNDEFINED_IO_HANDLE) {
    FileEvidence& f = file(c.handle);
    ++f.throttles, f.throttle_ticks += d;
  }
  Timeline& tl = ev_.timeline;
  size_t b0 = tl.bin(c.start), b1 = tl.bin(c.end);
  for (size_t b = b0; b <= b1; ++b) tl.throttled[b] += d / (b1 - b0 + 1);
  // What a slow write waited for: shown under it in the report's slowest calls.
  if (children_.size() < kMaxChildren) children_.push_back(c);
}

// Counted apart, and the file named among those left out (advise's `left_out`).
void EvidenceSink::on_infrastructure(const Call& c) {
  ev_.infrastructure[static_cast<size_t>(c.info->layer)].add(c, 1e9 * ev_.tick_s);
  if (device_ || c.handle == OTF2_UNDEFINED_IO_HANDLE) return;
  FileEvidence& f = file(c.handle);
  ++f.infrastructure_calls;
  if (roles().of_location(c.location) == ProcessRole::kLauncher) f.launcher = true;
}

void EvidenceSink::on_stdio(const Call& c) {
  FileEvidence* f = c.handle != OTF2_UNDEFINED_IO_HANDLE ? &file(c.handle) : nullptr;
  ++ev_.user_stdio_calls;
  if (f) ++f->stdio_calls;
  if (stdio_syscalls_ == 0) return;
  ++ev_.user_stdio_passthrough;
  if (f) ++f->stdio_passthrough, ++ev_.user_stdio_files[f->path];
}

void EvidenceSink::finish() {
  ev_.pagecache = pagecache_sum(pagecache_);
  ev_.hosts = hosts_.finish();
  for (auto& [n, d] : devices_) ev_.devices.push_back(std::move(d));
  for (auto& [loc, t] : threads_) {
    if (t.io_calls > 0 || t.throttles > 0) ev_.threads.push_back(std::move(t));
  }
  for (auto& [p, f] : files_) {
    f.origin = file_origin(f.path, f.syscall.ops[1].count > 0 || f.access.writes > 0);
    // A data file only the launcher used (its output, MPICH's shared memory) is not the ranks'.
    if (f.origin == FileOrigin::kApplication && f.launcher && f.syscall.count() == 0)
      f.origin = FileOrigin::kLauncher;
    ev_.files.push_back(std::move(f));
  }
  std::stable_sort(ev_.files.begin(), ev_.files.end(),
                   [](auto& a, auto& b) { return a.syscall.ticks() > b.syscall.ticks(); });
  for (Layer l : kAllLayers) {
    bool seen = l == Layer::kPageCache ? !pagecache_.empty() : ev_.layer(l).count() > 0;
    ev_.observed[static_cast<size_t>(l)] = layer_observation(defs(), l, seen);
    for (Op op : kAllOps) {
      ev_.op_observed[static_cast<size_t>(l)][static_cast<size_t>(op)] = observed(defs(), l, op);
    }
  }
}

void describe_archive(const Definitions& defs, Evidence& ev) {
  ev.tick_s = 1.0 / static_cast<double>(defs.resolution);
  ev.host = defs.host;
  ev.realtime_start = defs.realtime;
  auto str = [&](const std::string& k) {
    auto it = defs.node_string_properties.find(k);
    return it == defs.node_string_properties.end() ? std::string() : it->second;
  };
  ev.command = str(schema::kUserCommand);
  ev.launched_command = str(schema::kCommand);
  if (ev.command.empty()) ev.command = ev.launched_command;
  ev.status = str(schema::kStatus);
  ev.kernel = str(schema::kKernelRelease);
  ev.version = str(schema::kVersion);
  for (Layer l : kAllLayers) {
    std::string p = str(schema::probe_property(layer_key(l)));
    if (!p.empty()) ev.probes[std::string(layer_key(l))] = p;
  }
  for (auto& [name, value] : defs.node_uint_properties) {
    static constexpr std::string_view prefix = schema::kLostPrefix;
    if (name.rfind(prefix, 0) == 0) ev.lost[name.substr(prefix.size())] = value;
  }
  ev.timeline.start = defs.global_offset;
  ev.timeline.width =
      std::max<uint64_t>(1, (defs.trace_length + Timeline::kBins - 1) / Timeline::kBins);
}

}  // namespace

size_t Timeline::bin(uint64_t t) {
  if (t < start) return 0;
  while ((t - start) / width >= kBins) widen();
  return static_cast<size_t>((t - start) / width);
}

void Timeline::widen() {
  auto halve = [](auto& a) {
    for (size_t i = 0; i < kBins; ++i) {
      auto v = i < kBins / 2 ? a[2 * i] + a[2 * i + 1] : decltype(a[0] + a[0]){};
      a[i] = v;
    }
  };
  for (auto& a : ops) halve(a);
  for (auto& a : bytes) halve(a);
  halve(throttled);
  for (auto& [n, a] : thread_busy) halve(a);
  for (size_t i = 0; i < kBins; ++i) {
    max_depth[i] = i < kBins / 2 ? std::max(max_depth[2 * i], max_depth[2 * i + 1]) : 0;
  }
  width *= 2;
}

double ThreadEvidence::sci_score() const {
  double total = sci[0].total() + sci[1].total();
  if (total <= 0) return 0.0;
  return std::clamp((total - sci[0].best_total() - sci[1].best_total()) / total, 0.0, 1.0);
}

uint64_t Evidence::lost_total() const {
  uint64_t n = 0;
  for (auto& [k, v] : lost) n += v;
  return n;
}

Evidence collect_evidence(const std::string& trace, const EvidenceOptions& o) {
  TraceReader reader(trace);
  Evidence ev;
  ev.trace = reader.anchor().string();
  ev.small_request_bytes = o.small_request_bytes;
  describe_archive(reader.defs(), ev);
  EvidenceSink sink(reader.defs(), ev, o);
  Report meta;
  run_trace(reader, sink, Filters{}, meta);
  sink.finish();
  ev.collectives = sink.collectives();
  ev.datasets = dataset_rows(sink.datasets());
  ev.datasets_seen = dataset_layers_seen(reader.defs());
  ev.events = meta.meta.value("events", uint64_t{0});
  return ev;
}

}  // namespace ezio::analysis
