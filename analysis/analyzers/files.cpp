// SPDX-License-Identifier: GPL-2.0-only
#include "analysis/analyzers/files.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "analysis/analyzers/access_pattern.h"
#include "analysis/analyzers/layer_stats.h"
#include "analysis/analyzers/trace_run.h"
#include "analysis/model/file_origin.h"
#include "analysis/model/observed.h"

namespace ezio::analysis {
namespace {

struct FileLayer {
  LayerStats stats;
  Log2Histogram sizes;  // bytes of each read/write
  uint64_t sequential = 0, random = 0;
};

struct FileStats {
  std::array<FileLayer, kLayerCount> layers;
  uint64_t throttled_ticks = 0;  // dirty-throttling pauses inside calls on the file
  uint64_t bytes() const {
    uint64_t b = 0;
    for (auto& l : layers) {
      b += l.stats.ops[static_cast<size_t>(Op::kRead)].bytes +
           l.stats.ops[static_cast<size_t>(Op::kWrite)].bytes;
    }
    return b;
  }
  bool written() const {
    return std::any_of(layers.begin(), layers.end(), [](const FileLayer& l) {
      return l.stats.ops[static_cast<size_t>(Op::kWrite)].count > 0;
    });
  }
};

// Infrastructure I/O of one kind (launcher, system, inherited) at one layer: counted apart.
struct InfraKind {
  std::array<LayerStats, kLayerCount> layers;
  std::set<std::string> files;
};

class FilesSink : public CallSink {
 public:
  FilesSink(const Definitions& defs, const FilesOptions& o)
      : CallSink(defs), o_(o), ns_per_tick_(1e9 / static_cast<double>(defs.resolution)) {}

  void on_call(const Call& c) override {
    if (!o_.common.filters.layer_selected(c.info->layer) ||
        !o_.common.filters.region_selected(*c.info)) {
      return;
    }
    if (c.handle == OTF2_UNDEFINED_IO_HANDLE) {
      // FS events inside a call with no file of its own (sendfile, splice): bytes of some file.
      if (c.info->layer == Layer::kFs && c.op != Op::kOther && c.has_bytes) {
        unplaced_fs_bytes[static_cast<size_t>(c.op)] += c.bytes;
      }
      return;
    }
    if (c.infrastructure && !o_.common.all) return on_infrastructure(c);
    FileStats* f = file(c.handle);
    if (!f) return;
    // A page-cache region is a writer's dirty-throttling pause (layer_stats.h, counts_as_io),
    // nested in the write it held up: time on the file, not a page-cache access.
    if (!counts_as_io(c)) {
      if (c.info->layer == Layer::kPageCache) f->throttled_ticks += c.duration();
      return;
    }
    FileLayer& fl = f->layers[static_cast<size_t>(c.info->layer)];
    fl.stats.add(c, ns_per_tick_);
    if (c.op == Op::kOther || !c.has_bytes) return;
    fl.sizes.add(c.bytes);
    // Only the call that carried the I/O events moves the file position; the kernel calls nested
    // in it inherit its handle but are the same access.
    if (!c.owns_io) return;
    ++(handles_[c.handle].sequential(c) ? fl.sequential : fl.random);
  }
  void on_seek(Ref handle, uint64_t offset) override { handles_[handle].seek(offset); }

  std::map<std::string, FileStats> files_;
  // FS bytes per operation that no file can be named for (on_call).
  std::array<uint64_t, kOpCount> unplaced_fs_bytes{};
  std::map<std::string, InfraKind> infrastructure_;  // by kind: launcher, system, inherited

 private:
  void on_infrastructure(const Call& c) {
    if (!counts_as_io(c)) return;
    std::string path = defs().handle_path(c.handle);
    std::string kind = defs().is_device(c.location) ? "device"  // the requests they caused
                       : roles().of_location(c.location) == ProcessRole::kLauncher
                           ? "launcher"
                           : std::string(origin_key(file_origin(path, c.op == Op::kWrite)));
    InfraKind& k = infrastructure_[kind];
    k.layers[static_cast<size_t>(c.info->layer)].add(c, ns_per_tick_);
    k.files.insert(std::move(path));
  }

  FileStats* file(Ref handle) {
    auto it = by_handle_.find(handle);
    if (it != by_handle_.end()) return it->second;
    std::string path = defs().handle_path(handle);
    FileStats* f = nullptr;
    if (o_.files.empty() || std::any_of(o_.files.begin(), o_.files.end(), [&](auto& s) {
          return path.find(s) != std::string::npos;
        })) {
      f = &files_[path];
    }
    by_handle_.emplace(handle, f);
    return f;
  }

  const FilesOptions& o_;
  double ns_per_tick_;
  std::unordered_map<Ref, FileStats*> by_handle_;
  std::unordered_map<Ref, AccessPosition> handles_;
};

std::string size_label(uint64_t v) {
  static constexpr const char* units[] = {"", "K", "M", "G", "T", "P", "E"};
  int u = 0;
  while (v >= 1024 && v % 1024 == 0 && u < 6) v /= 1024, ++u;
  return fmt::format("{}{}", v, units[u]);
}

Cell sizes_cell(const Log2Histogram& h) {
  auto value = nlohmann::json::array();
  std::string text;
  for (int b = 0; b < Log2Histogram::kBuckets; ++b) {
    if (h.bucket(b) == 0) continue;
    uint64_t lo = Log2Histogram::bucket_low(b);
    value.push_back({{"min_bytes", lo},
                     {"max_bytes", Log2Histogram::bucket_high(b) - 1},
                     {"count", h.bucket(b)}});
    text += fmt::format("{}{}:{}", text.empty() ? "" : " ", size_label(lo), h.bucket(b));
  }
  return Cell{value, text.empty() ? "-" : text, false};
}

// A file's FS counts and bytes, "not observed" for an operation the FS hooks, seeing none or
// only some of its kind (analysis/model/observed.h), did not see on the file while the VFS did
// (an ext4 file's reads when ext4 took its tracepoints, a btrfs file's reads and writes), or on
// one of the application's files: sendfile and splice move its bytes with no VFS event above
// them. The other layers see all or nothing of a kind, or have no VFS call above them.
//
// FS events inside a call that names no file (sendfile and splice move bytes between two
// descriptors; the archive gives them no I/O handle) belong to a file no row can name: then every
// file's FS cells of that operation are "not observed", as any of them may lack those bytes.
struct FsCells {
  std::array<Observed, kOpCount> seen{};
  std::array<uint64_t, kOpCount> unplaced{};  // FilesSink::unplaced_fs_bytes
  bool application = false;                   // the file of the row: origin "application"
  bool unseen(const FileStats& f, Op op) const {
    size_t i = static_cast<size_t>(op);
    if (op == Op::kOther) return false;
    if (unplaced[i] > 0) return true;
    return f.layers[static_cast<size_t>(Layer::kFs)].stats.ops[i].count == 0 &&
           (application || f.layers[static_cast<size_t>(Layer::kVfs)].stats.ops[i].count > 0) &&
           shown_as_not_observed(0, seen[i]);
  }
  // A file the VFS saw reading or writing with no FS event the hooks could have missed gets an FS
  // row that says so, rather than none.
  bool unseen(const FileStats& f) const {
    if (f.layers[static_cast<size_t>(Layer::kSyscall)].stats.count() == 0) return false;
    return unseen(f, Op::kRead) || unseen(f, Op::kWrite);
  }
  Cell count(const FileStats& f, Layer l, Op op) const {
    uint64_t n = f.layers[static_cast<size_t>(l)].stats.ops[static_cast<size_t>(op)].count;
    return l == Layer::kFs && unseen(f, op) ? not_observed() : count_cell(n);
  }
  Cell bytes(const FileStats& f, Layer l, Op op) const {
    uint64_t n = f.layers[static_cast<size_t>(l)].stats.ops[static_cast<size_t>(op)].bytes;
    return l == Layer::kFs && unseen(f, op) ? not_observed() : bytes_cell(n);
  }
  static Cell not_observed() { return Cell{"not observed", "not observed", true}; }
};

Cell share_cell(uint64_t part, uint64_t total) {
  if (total == 0) return no_value_cell();
  return percent_cell(100.0 * static_cast<double>(part) / static_cast<double>(total));
}

}  // namespace

Report run_files(const FilesOptions& o) {
  o.common.filters.validate();
  TraceReader reader(o.common.trace);
  FilesSink sink(reader.defs(), o);
  Report report;
  run_trace(reader, sink, o.common.filters, report);
  double tick = 1.0 / static_cast<double>(reader.defs().resolution);

  Table t;
  t.name = "files";
  t.columns = {{"file", "File"},
               {"layer", "Layer"},
               {"reads", "Reads"},
               {"writes", "Writes"},
               {"other", "Other"},
               {"read_bytes", "Read bytes"},
               {"write_bytes", "Written bytes"},
               {"time_s", "Time"},
               {"sequential_percent", "Seq %"},
               {"random_percent", "Random %"},
               {"access_sizes", "Access sizes (log2 bucket:count)"},
               {"throttled_s", "Throttled"},
               {"origin", "Origin"}};
  FsCells fs;
  for (Op op : kAllOps) {
    fs.seen[static_cast<size_t>(op)] =
        observed(reader.defs().node_string_properties, Layer::kFs, op);
  }
  fs.unplaced = sink.unplaced_fs_bytes;
  std::vector<std::pair<const std::string*, const FileStats*>> order;
  for (auto& [path, f] : sink.files_) order.emplace_back(&path, &f);
  std::stable_sort(order.begin(), order.end(),
                   [](auto& a, auto& b) { return a.second->bytes() > b.second->bytes(); });
  for (auto& [path, f] : order) {
    FileOrigin kind = file_origin(*path, f->written());
    std::string origin(origin_key(kind));
    fs.application = kind == FileOrigin::kApplication;
    // The throttled time goes on one row of the file, the syscall's (its first above the block
    // layer if none: a device's requests are never throttled).
    bool has_syscall = f->layers[static_cast<size_t>(Layer::kSyscall)].stats.count() > 0;
    bool throttle_shown = false;
    for (Layer l : kAllLayers) {
      const FileLayer& fl = f->layers[static_cast<size_t>(l)];
      if (fl.stats.count() == 0 && (l != Layer::kFs || !fs.unseen(*f))) continue;
      bool throttle_here =
          !throttle_shown && l != Layer::kBlock && (!has_syscall || l == Layer::kSyscall);
      throttle_shown = throttle_shown || throttle_here;
      uint64_t classified = fl.sequential + fl.random;
      t.add({text_cell(*path), text_cell(std::string(layer_key(l))), fs.count(*f, l, Op::kRead),
             fs.count(*f, l, Op::kWrite), fs.count(*f, l, Op::kOther), fs.bytes(*f, l, Op::kRead),
             fs.bytes(*f, l, Op::kWrite),
             seconds_cell(static_cast<double>(fl.stats.ticks()) * tick),
             share_cell(fl.sequential, classified), share_cell(fl.random, classified),
             sizes_cell(fl.sizes),
             throttle_here ? seconds_cell(static_cast<double>(f->throttled_ticks) * tick)
                           : no_value_cell(),
             text_cell(origin)});
    }
  }
  report.tables.push_back(std::move(t));
  if (!sink.infrastructure_.empty()) {
    Table infra;
    infra.name = "infrastructure";
    infra.title = "Infrastructure files (left out above)";
    infra.columns = {{"kind", "Kind"},
                     {"files", "Files"},
                     {"layer", "Layer"},
                     {"reads", "Reads"},
                     {"writes", "Writes"},
                     {"other", "Other"},
                     {"read_bytes", "Read bytes"},
                     {"write_bytes", "Written bytes"},
                     {"time_s", "Time"}};
    for (auto& [kind, k] : sink.infrastructure_) {
      for (Layer l : kAllLayers) {
        const LayerStats& s = k.layers[static_cast<size_t>(l)];
        if (s.count() == 0) continue;
        auto op = [&](Op o) { return s.ops[static_cast<size_t>(o)]; };
        infra.add({text_cell(kind), count_cell(k.files.size()),
                   text_cell(std::string(layer_key(l))), count_cell(op(Op::kRead).count),
                   count_cell(op(Op::kWrite).count), count_cell(op(Op::kOther).count),
                   bytes_cell(op(Op::kRead).bytes), bytes_cell(op(Op::kWrite).bytes),
                   seconds_cell(static_cast<double>(s.ticks()) * tick)});
      }
    }
    report.tables.push_back(std::move(infra));
    report.notes.push_back(kInfrastructureNote);
  }
  report.notes.push_back(
      "Seq %: accesses starting where the previous access of the same open file ended (the "
      "first one if it starts at offset 0). Access sizes: count per power-of-two size bucket. "
      "Throttled: time the calls on the file were paused by the dirty-page limits "
      "(writeback:balance_dirty_pages), on the file's syscall row; \"-\" on the others. "
      "Origin: application, system (read by the loader, the C library or the tracer at start-up, "
      "or /proc, /sys), inherited (a descriptor from before tracing: terminal, pipe); advise "
      "speaks of the application's files only.");
  auto unplaced = [&](Op op) { return fs.unplaced[static_cast<size_t>(op)]; };
  if (unplaced(Op::kRead) + unplaced(Op::kWrite) > 0) {
    report.notes.push_back(fmt::format(
        "The FS layer read {} and wrote {} bytes inside calls that name no file (sendfile, "
        "splice): `eziotrace layers` counts them, no file here can; the FS columns of those "
        "operations read \"not observed\".",
        unplaced(Op::kRead), unplaced(Op::kWrite)));
  }
  return report;
}

}  // namespace ezio::analysis
