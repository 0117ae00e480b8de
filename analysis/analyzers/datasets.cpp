// SPDX-License-Identifier: GPL-2.0-only
#include "analysis/analyzers/datasets.h"

#include <fmt/format.h>

#include <algorithm>

#include "analysis/analyzers/trace_run.h"
#include "analysis/model/observed.h"

namespace ezio::analysis {

std::string DatasetRow::xfer() const {
  if (independent && collective) return "mixed";
  return collective ? "collective" : "independent";
}

void DatasetTracker::begin_location(OTF2_LocationRef loc) {
  process_ = defs_.process_of(loc);
  if (process_.empty()) process_ = fmt::format("location {}", loc);
  pending_.clear();
}

void DatasetTracker::add(const Call& c) {
  Layer l = c.info->layer;
  bool data = c.has_bytes && c.op != Op::kOther;
  if (l == Layer::kBlock) {
    // Block locations are read after the threads whose system calls caused their requests.
    if (!data || !c.call_id) return;
    auto it = block_ids_.find(c.call_id);
    if (it != block_ids_.end()) it->second->block_bytes += c.bytes;
    return;
  }
  if (l == Layer::kHdf5 && data && (c.info->name == "H5Dwrite" || c.info->name == "H5Dread")) {
    take(c);
  } else if (data && (l == Layer::kMpiIo || l == Layer::kUser || l == Layer::kSyscall)) {
    pending_.push_back({c.start, l, c.bytes, l == Layer::kSyscall ? c.call_id : 0});
  }
  if (c.depth == 0) pending_.clear();
}

// A transfer: the data calls that started inside it are its (calls arrive innermost first).
void DatasetTracker::take(const Call& c) {
  std::pair<std::string, std::string> key{defs_.handle_path(c.handle), c.object ? *c.object : ""};
  auto first = std::find_if(pending_.begin(), pending_.end(),
                            [&](const Inner& d) { return d.start >= c.start; });
  auto it = rows_.find(key);
  if (it == rows_.end()) {
    if (rows_.size() >= kMaxDatasets) {
      ++left_out_;
      pending_.erase(first, pending_.end());
      return;
    }
    it = rows_.emplace(key, DatasetRow{}).first;
    it->second.file = key.first;
    it->second.object = key.second;
  }
  DatasetRow& r = it->second;
  if (c.layout) r.layout = *c.layout;
  if (c.chunk_bytes) r.chunk_bytes = c.chunk_bytes;
  (c.io_flags & OTF2_IO_OPERATION_FLAG_COLLECTIVE ? r.collective : r.independent) = true;
  r.processes.insert(process_);
  bool write = c.op == Op::kWrite;
  (write ? r.writes : r.reads) += 1;
  (write ? r.asked_write_bytes : r.asked_read_bytes) += c.asked;
  r.ticks += c.duration();
  for (auto d = first; d != pending_.end(); ++d) {
    switch (d->layer) {
      case Layer::kMpiIo:
        r.mpiio_bytes += d->bytes;
        break;
      case Layer::kUser:
        r.posix_bytes += d->bytes;
        break;
      default:
        r.syscall_bytes += d->bytes;
        if (!d->call_id) break;
        if (block_ids_.size() < kMaxBlockIds) {
          block_ids_.emplace(d->call_id, &r);
        } else {
          ++blocks_untracked_;
        }
    }
  }
  pending_.erase(first, pending_.end());
}

std::vector<DatasetRow> dataset_rows(const DatasetTracker& t) {
  std::vector<DatasetRow> out;
  out.reserve(t.rows().size());
  for (const auto& [key, row] : t.rows()) out.push_back(row);
  return out;
}

DatasetLayersSeen dataset_layers_seen(const Definitions& defs) {
  auto seen = [&](Layer l) {
    for (Op op : {Op::kRead, Op::kWrite}) {
      Observed o = observed(defs, l, op);
      if (o == Observed::kAll || o == Observed::kPartial) return true;
      if (o == Observed::kUnknown && l == Layer::kUser) return true;  // EZTrace's own archive
    }
    return false;
  };
  return {seen(Layer::kMpiIo), seen(Layer::kUser), seen(Layer::kSyscall), seen(Layer::kBlock)};
}

namespace {

class DatasetsSink : public CallSink {
 public:
  explicit DatasetsSink(const Definitions& defs) : CallSink(defs), tracker(defs) {}
  void begin_location(OTF2_LocationRef loc) override {
    CallSink::begin_location(loc);
    tracker.begin_location(loc);
  }
  void on_call(const Call& c) override { tracker.add(c); }
  DatasetTracker tracker;
};

Cell below_cell(uint64_t bytes, bool seen) {
  return !seen && bytes == 0 ? Cell{"not observed", "not observed", true} : bytes_cell(bytes);
}

Table datasets_table(const std::vector<DatasetRow>& rows, const DatasetLayersSeen& seen,
                     double tick) {
  Table t;
  t.name = "datasets";
  t.title = "HDF5 datasets";
  t.columns = {{"file", "File"},
               {"object", "Dataset"},
               {"layout", "Layout"},
               {"chunk_bytes", "Chunk"},
               {"xfer", "Transfer"},
               {"processes", "Procs"},
               {"writes", "H5Dwrite"},
               {"reads", "H5Dread"},
               {"asked_write_bytes", "Asked written"},
               {"asked_read_bytes", "Asked read"},
               {"time_s", "Time"},
               {"mpiio_bytes", "MPI-IO bytes"},
               {"posix_bytes", "POSIX bytes"},
               {"syscall_bytes", "Syscall bytes"},
               {"block_bytes", "Block bytes"}};
  for (const DatasetRow& r : rows) {
    t.add({text_cell(r.file), text_cell(r.object.empty() ? "(anonymous)" : r.object),
           r.layout.empty() ? no_value_cell() : text_cell(r.layout),
           r.chunk_bytes ? bytes_cell(r.chunk_bytes) : no_value_cell(), text_cell(r.xfer()),
           count_cell(r.processes.size()), count_cell(r.writes), count_cell(r.reads),
           bytes_cell(r.asked_write_bytes), bytes_cell(r.asked_read_bytes),
           seconds_cell(static_cast<double>(r.ticks) * tick), below_cell(r.mpiio_bytes, seen.mpiio),
           below_cell(r.posix_bytes, seen.posix), below_cell(r.syscall_bytes, seen.syscall),
           below_cell(r.block_bytes, seen.block)});
  }
  return t;
}

}  // namespace

Report run_datasets(const DatasetsOptions& o) {
  o.common.filters.validate();
  TraceReader reader(o.common.trace);
  DatasetsSink sink(reader.defs());
  Report report;
  run_trace(reader, sink, o.common.filters, report);
  double tick = 1.0 / static_cast<double>(reader.defs().resolution);
  report.tables.push_back(
      datasets_table(dataset_rows(sink.tracker), dataset_layers_seen(reader.defs()), tick));
  if (!sink.tracker.any()) {
    report.notes.push_back(
        "No H5Dwrite or H5Dread in this trace (recorded without -t hdf5, or none made).");
  }
  if (sink.tracker.left_out() > 0) {
    report.notes.push_back(fmt::format("{} transfers on datasets past the first {} left out.",
                                       sink.tracker.left_out(), DatasetTracker::kMaxDatasets));
  }
  if (sink.tracker.blocks_untracked() > 0) {
    report.notes.push_back(fmt::format(
        "{} system calls past the first {} not followed to the block layer: block bytes are "
        "lower bounds.",
        sink.tracker.blocks_untracked(), DatasetTracker::kMaxBlockIds));
  }
  report.notes.push_back(
      "Below HDF5: bytes read or written by the MPI-IO, POSIX and system calls made inside the "
      "dataset's H5Dwrite/H5Dread calls, and by the block requests those system calls caused. "
      "HDF5 writes small pieces, cached chunks and compact data later (H5Dclose, H5Fflush): not "
      "counted here.");
  return report;
}

}  // namespace ezio::analysis
