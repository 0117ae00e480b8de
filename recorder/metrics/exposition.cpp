// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/metrics/exposition.h"

#include <fmt/format.h>

#include <functional>
#include <iterator>

namespace ezio::recorder::metrics {
namespace {

bool is_block(uint16_t op) { return op >= EZIO_M_BLK_READ && op <= EZIO_M_BLK_OTHER; }
bool is_main(const NamedSeries& n) { return n.s.key.kind == EZIO_M_KIND_MAIN; }

// A label value escaped as both formats want it.
std::string escaped(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

std::string labels(const NamedSeries& n, const std::string& extra = {}) {
  std::string out;
  auto add = [&out](const char* k, const std::string& v) {
    if (v.empty()) return;
    out += fmt::format("{}{}=\"{}\"", out.empty() ? "" : ",", k, escaped(v));
  };
  add("cgroup", n.cgroup);
  add("job_id", n.job_id);
  add("unit", n.unit);
  add("slice", n.slice);
  add("user_unit", n.user_unit);
  add("user", n.user);
  add("device", n.device);
  add("fstype", n.fstype);
  add("mount", n.mount);
  add("op", op_name(n.s.key.op));
  if (!extra.empty()) out += (out.empty() ? "" : ",") + extra;
  return out;
}

struct Family {
  const char* name;  // without _total
  const char* type;  // counter, histogram, gauge
  const char* help;
};

void header(std::string& out, const Family& f, Format fmt) {
  bool counter_04 = fmt == Format::kPrometheus && std::string_view(f.type) == "counter";
  std::string name = counter_04 ? fmt::format("{}_total", f.name) : f.name;
  out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, f.help, name, f.type);
}

// A series of the service's own, without labels: a gauge, or a counter (its sample `_total`).
void unlabelled(std::string& out, Format fmt, const Family& f, uint64_t value) {
  header(out, f, fmt);
  bool counter = std::string_view(f.type) == "counter";
  out += fmt::format("{}{} {}\n", f.name, counter ? "_total" : "", value);
}

using Pick = std::function<bool(const NamedSeries&)>;
using Value = std::function<uint64_t(const ezio_metric_value&)>;

void counter(std::string& out, const Snapshot& s, Format fmt, const Family& f, const Pick& pick,
             const Value& value) {
  header(out, f, fmt);
  for (const NamedSeries& n : s.series) {
    if (pick(n)) out += fmt::format("{}_total{{{}}} {}\n", f.name, labels(n), value(n.s.value));
  }
}

// Bucket i's upper bound, in seconds (metrics.h: 2^(i + SHIFT) ns).
double bucket_le(unsigned i) { return double(1ull << (i + EZIO_M_HIST_SHIFT)) / 1e9; }

void histogram(std::string& out, const Snapshot& s, Format fmt, const Family& f, const Pick& pick) {
  header(out, f, fmt);
  for (const NamedSeries& n : s.series) {
    if (!pick(n)) continue;
    const ezio_metric_value& v = n.s.value;
    uint64_t cumulative = 0;
    for (unsigned i = 0; i < EZIO_M_HIST; ++i) {
      cumulative += v.hist[i];
      std::string le = i + 1 == EZIO_M_HIST ? "+Inf" : fmt::format("{:g}", bucket_le(i));
      out += fmt::format("{}_bucket{{{}}} {}\n", f.name, labels(n, fmt::format("le=\"{}\"", le)),
                         cumulative);
    }
    out += fmt::format("{}_count{{{}}} {}\n", f.name, labels(n), cumulative);
    out += fmt::format("{}_sum{{{}}} {:.9f}\n", f.name, labels(n), v.sum_ns / 1e9);
  }
}

// The page-cache counters, in pages, one family per operation.
void pagecache_counters(std::string& out, const Snapshot& s, Format fmt) {
  struct PageFamily {
    uint16_t op;
    Family f;
  };
  static const PageFamily families[] = {
      {EZIO_M_PC_DIRTIED,
       {"eziotrace_pagecache_dirtied_pages", "counter",
        "page-cache pages made dirty (by writes, by stores to shared file mappings)"}},
      {EZIO_M_PC_ACCESSED,
       {"eziotrace_pagecache_accessed_pages", "counter", "pages the read path looked up"}},
      {EZIO_M_PC_MISSED,
       {"eziotrace_pagecache_missed_pages", "counter",
        "of the pages looked up, those the reader had to bring in (hits: accessed - missed)"}},
      {EZIO_M_PC_READAHEAD,
       {"eziotrace_pagecache_readahead_pages", "counter",
        "pages brought in beyond what the read path needed then"}},
      {EZIO_M_PC_EVICTED,
       {"eziotrace_pagecache_evicted_pages", "counter",
        "pages removed from the cache, in the job's context (no cgroup: kswapd's reclaim)"}},
  };
  for (const PageFamily& p : families) {
    uint16_t op = p.op;
    counter(
        out, s, fmt, p.f, [op](const NamedSeries& n) { return is_main(n) && n.s.key.op == op; },
        [](const ezio_metric_value& v) { return v.count; });
  }
}

// The VFS and FS layers' families: calls (fsync and fdatasync among them), bytes, errors,
// latency, per file-system type and mount.
void file_system_layers(std::string& out, const Snapshot& s, Format fmt) {
  struct Layer {
    uint16_t first, last;
    const char *calls, *bytes, *errors, *latency, *what;
  };
  static const Layer layers[] = {
      {EZIO_M_VFS_READ, EZIO_M_VFS_FDATASYNC, "eziotrace_vfs_calls", "eziotrace_vfs_bytes",
       "eziotrace_vfs_errors", "eziotrace_vfs_latency_seconds",
       "read, write, fsync and fdatasync calls on regular files, by file-system type and mount"},
      {EZIO_M_FS_READ, EZIO_M_FS_FSYNC, "eziotrace_fs_calls", "eziotrace_fs_bytes",
       "eziotrace_fs_errors", "eziotrace_fs_latency_seconds",
       "file-system operations its own tracepoints show (ext4: pages written), by type and "
       "mount"},
  };
  for (const Layer& l : layers) {
    Pick pick = [&l](const NamedSeries& n) {
      return is_main(n) && n.s.key.op >= l.first && n.s.key.op <= l.last;
    };
    counter(out, s, fmt, {l.calls, "counter", l.what}, pick,
            [](const ezio_metric_value& v) { return v.count; });
    Pick moves = [&pick](const NamedSeries& n) {
      uint16_t op = n.s.key.op;
      return pick(n) && op != EZIO_M_VFS_FSYNC && op != EZIO_M_VFS_FDATASYNC &&
             op != EZIO_M_FS_FSYNC;
    };
    counter(out, s, fmt, {l.bytes, "counter", "bytes read or written"}, moves,
            [](const ezio_metric_value& v) { return v.bytes; });
    counter(out, s, fmt, {l.errors, "counter", "operations that failed"}, pick,
            [](const ezio_metric_value& v) { return v.errors; });
    histogram(out, s, fmt,
              {l.latency, "histogram",
               "duration (where it is measured; VFS: of the system calls timed, "
               "eziotrace_latency_sample_every)"},
              [&pick](const NamedSeries& n) { return pick(n) && n.s.value.sum_ns; });
  }
}

const char* layer_of(uint16_t op) {
  if (is_block(op)) return "block";
  if (op >= EZIO_M_VFS_READ && op <= EZIO_M_VFS_FDATASYNC) return "vfs";
  if (op == EZIO_M_MOUNT_OVERFLOW) return "vfs";
  if (op >= EZIO_M_FS_READ && op <= EZIO_M_FS_FSYNC) return "fs";
  if (op >= EZIO_M_PC_DIRTIED) return "pagecache";
  return "syscall";
}

}  // namespace

const char* content_type(Format f) {
  return f == Format::kOpenMetrics ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
                                   : "text/plain; version=0.0.4; charset=utf-8";
}

const char* op_name(uint16_t op) {
  static const char* const names[] = {
      "none",      "read",    "write",    "fsync",  "fdatasync", "sync_file_range",
      "open",      "close",   "read",     "write",  "flush",     "discard",
      "other",     "dirtied", "accessed", "missed", "readahead", "evicted",
      "throttled", "read",    "write",    "fsync",  "fdatasync", "read",
      "write",     "fsync",   "mount"};
  static_assert(std::size(names) == EZIO_M_OP_COUNT, "a name for each enum ezio_metric_op");
  return op < EZIO_M_OP_COUNT ? names[op] : "unknown";
}

std::string expose(const Snapshot& s, Format fmt) {
  std::string out;
  Pick syscall = [](const NamedSeries& n) {
    return is_main(n) && n.s.key.op >= EZIO_M_SC_READ && n.s.key.op <= EZIO_M_SC_CLOSE;
  };
  Pick block = [](const NamedSeries& n) { return is_main(n) && is_block(n.s.key.op); };
  Pick timed_block = [](const NamedSeries& n) {
    return is_main(n) && is_block(n.s.key.op) && n.s.value.sum_ns;
  };
  Pick queued_block = [](const NamedSeries& n) {
    return n.s.key.kind == EZIO_M_KIND_QUEUE && is_block(n.s.key.op);
  };
  counter(out, s, fmt, {"eziotrace_syscall_calls", "counter", "I/O system calls, by cgroup v2"},
          syscall, [](const ezio_metric_value& v) { return v.count; });
  counter(
      out, s, fmt,
      {"eziotrace_syscall_bytes", "counter", "bytes read or written by the system calls"},
      [](const NamedSeries& n) {
        return is_main(n) && (n.s.key.op == EZIO_M_SC_READ || n.s.key.op == EZIO_M_SC_WRITE);
      },
      [](const ezio_metric_value& v) { return v.bytes; });
  counter(out, s, fmt, {"eziotrace_syscall_errors", "counter", "system calls that failed"}, syscall,
          [](const ezio_metric_value& v) { return v.errors; });
  histogram(out, s, fmt,
            {"eziotrace_syscall_latency_seconds", "histogram",
             "system call entry to exit, of the calls timed: one in eziotrace_latency_sample_every "
             "per CPU, fsync, fdatasync and sync_file_range always (_count: the calls timed; "
             "eziotrace_syscall_calls_total: every call)"},
            syscall);
  counter(out, s, fmt,
          {"eziotrace_block_requests", "counter",
           "block requests completed, charged to the cgroup that issued them or dirtied their "
           "pages (no cgroup label: no one's)"},
          block, [](const ezio_metric_value& v) { return v.count; });
  counter(out, s, fmt, {"eziotrace_block_bytes", "counter", "bytes of the block requests"}, block,
          [](const ezio_metric_value& v) { return v.bytes; });
  counter(out, s, fmt,
          {"eziotrace_block_writeback_requests", "counter",
           "block requests charged through the dirtier of their pages (writeback)"},
          block, [](const ezio_metric_value& v) { return v.writeback; });
  counter(out, s, fmt, {"eziotrace_block_errors", "counter", "block requests that failed"}, block,
          [](const ezio_metric_value& v) { return v.errors; });
  histogram(out, s, fmt,
            {"eziotrace_block_service_seconds", "histogram", "block request issue to completion"},
            timed_block);
  histogram(out, s, fmt,
            {"eziotrace_block_queue_seconds", "histogram",
             "block request start to issue (time queued in the block layer)"},
            queued_block);
  file_system_layers(out, s, fmt);
  pagecache_counters(out, s, fmt);
  histogram(out, s, fmt,
            {"eziotrace_dirty_throttle_seconds", "histogram",
             "pauses imposed on writers by the dirty-page limits (balance_dirty_pages), as asked"},
            [](const NamedSeries& n) { return is_main(n) && n.s.key.op == EZIO_M_PC_THROTTLED; });
  header(out, {"eziotrace_overflow_events", "counter", "events that found no room in the table"},
         fmt);
  for (uint16_t op = 1; op < EZIO_M_OP_COUNT; ++op) {
    out += fmt::format("eziotrace_overflow_events_total{{layer=\"{}\",op=\"{}\"}} {}\n",
                       layer_of(op), op_name(op), s.overflow[op]);
  }
  unlabelled(
      out, fmt,
      {"eziotrace_latency_sample_every", "gauge",
       "the syscall and VFS latency histograms time one counted call of each operation in this "
       "many per CPU (--metrics-latency-every; 1: every call): their _count is the calls timed"},
      s.latency_every);
  unlabelled(out, fmt,
             {"eziotrace_series_limit", "gauge", "room in the table (--metrics-max-series)"},
             s.max_series);
  unlabelled(out, fmt, {"eziotrace_series", "gauge", "series in the table"}, s.series.size());
  unlabelled(out, fmt, {"eziotrace_ended_cgroups", "counter", "cgroups reported for the last time"},
             s.ended_cgroups);
  unlabelled(out, fmt,
             {"eziotrace_mounts", "gauge",
              "mounts holding a slot of the VFS layer's mount table (the others: "
              "mount=\"(other)\")"},
             s.mounts);
  unlabelled(out, fmt,
             {"eziotrace_mounts_limit", "gauge", "slots of the mount table (--metrics-max-mounts)"},
             s.max_mounts);
  unlabelled(out, fmt,
             {"eziotrace_ended_mounts", "counter",
              "mounts unmounted, reported for the last time, their slot freed"},
             s.ended_mounts);
  header(out,
         {"eziotrace_syscall_hook", "gauge",
          "how the syscall and VFS series are counted: fentry (the calls' own functions) or "
          "tracepoint (sys_enter/sys_exit)"},
         fmt);
  out += fmt::format("eziotrace_syscall_hook{{mode=\"{}\"}} 1\n", s.syscall_hook);
  if (!s.fs_hooks.empty()) {
    header(out,
           {"eziotrace_fs_hook", "gauge",
            "how a file system's FS series are heard: fentry (its own file operations: every "
            "read, write and fsync, timed) or tracepoint (what its tracepoints show)"},
           fmt);
    for (const FsHook& h : s.fs_hooks)
      out += fmt::format("eziotrace_fs_hook{{fstype=\"{}\",mode=\"{}\"}} 1\n", h.fstype, h.mode);
  }
  if (fmt == Format::kOpenMetrics) out += "# EOF\n";
  return out;
}

}  // namespace ezio::recorder::metrics
