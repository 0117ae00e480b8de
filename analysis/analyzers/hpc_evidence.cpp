// SPDX-License-Identifier: GPL-2.0-only
#include "analysis/analyzers/hpc_evidence.h"

namespace ezio::analysis {
namespace {

// System calls of collective calls remembered to match the block requests they caused (8 bytes
// and a path each); past this the device figures are lower bounds (docs/analysis.md).
constexpr size_t kMaxAggregatedIds = 1 << 18;

bool contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

}  // namespace

bool is_mpiio_region(const std::string& name) { return name.starts_with("MPI_File_"); }
bool is_hdf5_region(const std::string& name) {
  return name.size() > 3 && name[0] == 'H' && name[1] == '5' && name[2] >= 'A' && name[2] <= 'Z';
}

void HpcCollector::begin_location(const std::string& process) {
  process_ = process;
  mpiio_depth_ = hdf5_depth_ = 0;
  in_flush_ = false;
  sys_ = sys_small_ = sys_unaligned_ = 0;
  pending_ids_.clear();
}

// By name, not by layer: the calls are EZTrace's (User) here, and the MPI-IO and HDF5 layers of
// their own where the model has them.
void HpcCollector::enter(const RegionInfo& r) {
  if (is_mpiio_region(r.name) && mpiio_depth_++ == 0) {
    sys_ = sys_small_ = sys_unaligned_ = 0;
    pending_ids_.clear();
  }
  if (is_hdf5_region(r.name) && hdf5_depth_++ == 0) in_flush_ = r.name == "H5Fflush";
}

void HpcCollector::on_call(const Call& c, const std::string& path) {
  const std::string& name = c.info->name;
  if (is_mpiio_region(name)) return on_mpiio(c, path);
  if (is_hdf5_region(name)) return on_hdf5(c, path);
  if (c.info->layer != Layer::kSyscall || !c.owns_io || !c.has_bytes || c.op == Op::kOther) return;
  if (mpiio_depth_ > 0) {
    ++sys_;
    if (c.bytes < o_.collective_small_bytes) ++sys_small_;
    uint64_t a = o_.collective_align_bytes ? o_.collective_align_bytes : 1;
    if ((c.has_offset && c.offset % a != 0) || c.bytes % a != 0) ++sys_unaligned_;
    if (c.call_id && pending_ids_.size() < kMaxAggregatedIds) pending_ids_.insert(c.call_id);
  }
  // HDF5's metadata: small writes near the file's start, made inside an HDF5 call (a flush's are
  // counted with the flush).
  if (hdf5_depth_ > 0 && !in_flush_ && c.op == Op::kWrite && c.has_offset &&
      c.bytes < o_.hdf5_metadata_bytes && c.offset < o_.hdf5_metadata_region_bytes &&
      !path.empty()) {
    Hdf5FileEvidence& f = ev_.hdf5[path];
    ++f.metadata_writes;
    f.metadata_ticks += c.duration();
  }
}

void HpcCollector::on_mpiio(const Call& c, const std::string& path) {
  if (mpiio_depth_ > 0) --mpiio_depth_;
  if (mpiio_depth_ > 0 || path.empty() || c.op == Op::kOther || !c.has_bytes) return;
  MpiioFileEvidence& f = ev_.mpiio[path];
  uint64_t d = c.duration();
  f.ticks += d;
  ev_.mpiio_ticks += d;
  const std::string& name = c.info->name;
  if (contains(name, "_shared") || contains(name, "_ordered")) {
    ++f.shared;
    f.shared_ticks += d;
    f.shared_processes.insert(process_);
  }
  if (c.io_flags & OTF2_IO_OPERATION_FLAG_COLLECTIVE) {
    ++f.collective;
    f.collective_bytes += c.bytes;
    f.aggregated += sys_;
    f.aggregated_small += sys_small_;
    f.aggregated_unaligned += sys_unaligned_;
    for (uint64_t id : pending_ids_) {
      if (aggregated_ids_.size() < kMaxAggregatedIds) aggregated_ids_.emplace(id, path);
    }
  } else {
    ++f.independent;
    if (c.bytes < o_.mpiio_small_bytes) ++f.independent_small;
    f.independent_processes.insert(process_);
  }
  sys_ = sys_small_ = sys_unaligned_ = 0;
  pending_ids_.clear();
}

void HpcCollector::on_hdf5(const Call& c, const std::string& path) {
  if (hdf5_depth_ > 0) --hdf5_depth_;
  if (hdf5_depth_ > 0 || path.empty()) return;
  const std::string& name = c.info->name;
  Hdf5FileEvidence& f = ev_.hdf5[path];
  f.ticks += c.duration();
  if (name == "H5Fflush") ++f.flushes, f.flush_ticks += c.duration();
  in_flush_ = false;
  if ((name != "H5Dwrite" && name != "H5Dread") || !c.object) return;
  Hdf5DatasetEvidence& d = ev_.datasets[path + ":" + *c.object];
  d.file = path;
  if (c.chunk_bytes) d.chunk_bytes = c.chunk_bytes;
  if (name != "H5Dwrite") return;
  ++d.writes;
  if (c.has_bytes) {
    d.bytes += c.bytes;
    if (c.bytes < o_.hdf5_small_write_bytes) ++d.small_writes;
  }
}

void HpcCollector::on_request(const Call& c, uint64_t call_id) {
  auto it = aggregated_ids_.find(call_id);
  if (it == aggregated_ids_.end() || c.op == Op::kOther) return;
  MpiioFileEvidence& f = ev_.mpiio[it->second];
  ++f.device;
  if (c.bytes < o_.collective_small_bytes) ++f.device_small;
}

}  // namespace ezio::analysis
