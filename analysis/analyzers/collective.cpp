// SPDX-License-Identifier: GPL-2.0-only
#include "analysis/analyzers/collective.h"

#include <fmt/format.h>

#include <algorithm>

#include "analysis/analyzers/trace_run.h"

namespace ezio::analysis {
namespace {

void merge_extents(std::vector<std::pair<uint64_t, uint64_t>>& v) {
  std::sort(v.begin(), v.end());
  size_t out = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    if (out > 0 && v[i].first <= v[out - 1].second) {
      v[out - 1].second = std::max(v[out - 1].second, v[i].second);
    } else {
      v[out++] = v[i];
    }
  }
  v.resize(out);
}

}  // namespace

uint64_t covered_bytes(const CollectivePart& asker, const CollectivePart& writer) {
  if (!asker.has_offset) return 0;
  uint64_t lo = asker.offset, hi = asker.offset + asker.asked, n = 0;
  for (auto [b, e] : writer.extents) {
    uint64_t from = std::max(lo, b), to = std::min(hi, e);
    if (from < to) n += to - from;
  }
  return n;
}

void CollectiveTracker::begin_location(OTF2_LocationRef loc) {
  process_ = defs_.process_of(loc);
  if (process_.empty()) process_ = fmt::format("location {}", loc);
  pending_.clear();
}

void CollectiveTracker::add(const Call& c) {
  Layer l = c.info->layer;
  if ((l == Layer::kUser || l == Layer::kSyscall) && c.has_bytes && c.op != Op::kOther) {
    pending_.push_back({c.start, l, c.op, c.bytes, c.has_offset, c.offset});
  } else if (l == Layer::kMpiIo && (c.io_flags & OTF2_IO_OPERATION_FLAG_COLLECTIVE) &&
             c.op != Op::kOther) {
    take(c);
  }
  if (c.depth == 0) pending_.clear();
}

// A rank's collective call: the data calls that started inside it are its part's.
void CollectiveTracker::take(const Call& c) {
  std::string file = defs_.handle_path(c.handle);
  uint64_t n = ++seen_[{process_, file}];
  auto [it, added] = index_.try_emplace({file, n}, ops_.size());
  if (added) {
    if (ops_.size() >= kMaxOps) {
      index_.erase(it);
      ++left_out_;
      return;
    }
    ops_.push_back({file, n, c.op, {}});
  }
  CollectivePart p;
  p.process = process_;
  p.function = c.info->name;
  p.start = c.start;
  p.end = c.end;
  p.asked = c.has_bytes ? c.bytes : 0;
  p.has_offset = c.has_offset;
  p.offset = c.offset;
  std::vector<std::pair<uint64_t, uint64_t>> sys, posix;
  auto first = std::find_if(pending_.begin(), pending_.end(),
                            [&](const DataCall& d) { return d.start >= c.start; });
  for (auto d = first; d != pending_.end(); ++d) {
    if (d->op != c.op) continue;
    bool sc = d->layer == Layer::kSyscall;
    (sc ? p.syscall_calls : p.posix_calls) += 1;
    (sc ? p.syscall_bytes : p.posix_bytes) += d->bytes;
    if (d->has_offset) (sc ? sys : posix).push_back({d->offset, d->offset + d->bytes});
  }
  pending_.erase(first, pending_.end());
  p.extents = sys.empty() ? std::move(posix) : std::move(sys);
  merge_extents(p.extents);
  ops_[it->second].parts.push_back(std::move(p));
}

namespace {

class CollectiveSink : public CallSink {
 public:
  explicit CollectiveSink(const Definitions& defs) : CallSink(defs), tracker(defs) {}
  void begin_location(OTF2_LocationRef loc) override {
    CallSink::begin_location(loc);
    tracker.begin_location(loc);
  }
  void on_call(const Call& c) override { tracker.add(c); }
  CollectiveTracker tracker;
};

Cell offset_cell(const CollectivePart& p) {
  return p.has_offset ? count_cell(p.offset) : no_value_cell();
}

// One row per operation: the ranks, the bytes asked, which ranks moved data (the aggregators).
Table operations_table(const std::vector<CollectiveOp>& ops, double tick) {
  Table t;
  t.name = "collective";
  t.title = "Collective MPI-IO operations";
  t.columns = {{"file", "File"},
               {"call", "#"},
               {"function", "Function"},
               {"operation", "Op"},
               {"ranks", "Ranks"},
               {"asked_bytes", "Asked"},
               {"aggregators", "Aggregators"},
               {"posix_bytes", "POSIX bytes"},
               {"syscall_bytes", "Syscall bytes"},
               {"span_s", "Span"}};
  for (const CollectiveOp& op : ops) {
    uint64_t asked = 0, posix = 0, sys = 0, first = UINT64_MAX, last = 0;
    std::string aggregators;
    for (const CollectivePart& p : op.parts) {
      asked += p.asked;
      posix += p.posix_bytes;
      sys += p.syscall_bytes;
      first = std::min(first, p.start);
      last = std::max(last, p.end);
      if (p.posix_calls + p.syscall_calls == 0) continue;
      aggregators += (aggregators.empty() ? "" : ", ") + p.process;
    }
    t.add({text_cell(op.file), count_cell(op.index), text_cell(op.parts.front().function),
           text_cell(std::string(op_name(op.op))), count_cell(op.parts.size()), bytes_cell(asked),
           text_cell(aggregators.empty() ? "(none)" : aggregators), bytes_cell(posix),
           bytes_cell(sys), seconds_cell(static_cast<double>(last - first) * tick)});
  }
  return t;
}

// One row per rank of each operation: what it asked and what its own calls inside moved.
Table ranks_table(const std::vector<CollectiveOp>& ops, double tick) {
  Table t;
  t.name = "collective_ranks";
  t.title = "Each rank's part";
  t.columns = {{"file", "File"},
               {"call", "#"},
               {"rank", "Rank"},
               {"function", "Function"},
               {"asked_bytes", "Asked"},
               {"offset", "Offset"},
               {"posix_calls", "POSIX calls"},
               {"posix_bytes", "POSIX bytes"},
               {"syscall_calls", "Syscalls"},
               {"syscall_bytes", "Syscall bytes"},
               {"time_s", "Time"}};
  for (const CollectiveOp& op : ops) {
    for (const CollectivePart& p : op.parts) {
      t.add({text_cell(op.file), count_cell(op.index), text_cell(p.process), text_cell(p.function),
             bytes_cell(p.asked), offset_cell(p), count_cell(p.posix_calls),
             bytes_cell(p.posix_bytes), count_cell(p.syscall_calls), bytes_cell(p.syscall_bytes),
             seconds_cell(static_cast<double>(p.end - p.start) * tick)});
    }
  }
  return t;
}

// Who moved each rank's data: its asked range against every rank's data calls inside its call.
Table movers_table(const std::vector<CollectiveOp>& ops) {
  Table t;
  t.name = "collective_movers";
  t.title = "Whose calls moved each rank's data";
  t.columns = {{"file", "File"},         {"call", "#"},      {"rank", "Asked by"},
               {"moved_by", "Moved by"}, {"bytes", "Bytes"}, {"share_percent", "% of asked"}};
  for (const CollectiveOp& op : ops) {
    for (const CollectivePart& asker : op.parts) {
      for (const CollectivePart& mover : op.parts) {
        uint64_t n = covered_bytes(asker, mover);
        if (n == 0) continue;
        t.add({text_cell(op.file), count_cell(op.index), text_cell(asker.process),
               text_cell(mover.process), bytes_cell(n),
               percent_cell(100.0 * static_cast<double>(n) / static_cast<double>(asker.asked))});
      }
    }
  }
  return t;
}

}  // namespace

Report run_collective(const CollectiveOptions& o) {
  o.common.filters.validate();
  TraceReader reader(o.common.trace);
  CollectiveSink sink(reader.defs());
  Report report;
  run_trace(reader, sink, o.common.filters, report);
  double tick = 1.0 / static_cast<double>(reader.defs().resolution);
  const auto& ops = sink.tracker.ops();
  report.tables.push_back(operations_table(ops, tick));
  report.tables.push_back(ranks_table(ops, tick));
  report.tables.push_back(movers_table(ops));
  if (ops.empty()) {
    report.notes.push_back(
        "No collective MPI-IO call in this trace (recorded without -t mpiio, or none made).");
  }
  if (sink.tracker.left_out() > 0) {
    report.notes.push_back(fmt::format("{} collective operations past the first {} left out.",
                                       sink.tracker.left_out(), CollectiveTracker::kMaxOps));
  }
  report.notes.push_back(
      "Moved by: the system calls (else POSIX calls) with an offset that each rank made inside "
      "its own collective call, set against the asked rank's byte range [offset, offset + asked) "
      "(its extent: exact for a contiguous view).");
  return report;
}

}  // namespace ezio::analysis
