#include "recorder/span_nesting.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <unordered_set>

#include "recorder/fs_events.h"
#include "recorder/vfs_events.h"

namespace ezio::recorder {
namespace {

uint64_t clamp(uint64_t t, uint64_t lo, uint64_t hi) { return std::min(std::max(t, lo), hi); }

std::string bounded(const char* s, size_t max) { return std::string(s, strnlen(s, max)); }

// Kernel dev_t: MAJOR << 20 | MINOR (include/linux/kdev_t.h).
std::string dev_text(uint32_t dev) { return fmt::format("{}:{}", dev >> 20, dev & 0xfffff); }

template <typename Rec>
void by_time(std::vector<const Rec*>& v) {
  std::stable_sort(v.begin(), v.end(),
                   [](const Rec* a, const Rec* b) { return a->t_enter < b->t_enter; });
}

}  // namespace

NestedLayers::NestedLayers(otf2::ArchiveWriter& w, const RecordStore& store,
                           ArchiveSummary& summary)
    : w_(w), summary_(summary) {
  attrs_ = {w_.attribute("vfs.inode", "inode number", OTF2_TYPE_UINT64),
            w_.attribute("vfs.dev", "device of the file system (major:minor)", OTF2_TYPE_STRING),
            w_.attribute("vfs.fstype", "file-system type", OTF2_TYPE_STRING),
            w_.attribute("vfs.path", "path of the file in the recorded process's mount tree",
                         OTF2_TYPE_STRING),
            w_.attribute("vfs.mount", "mount point of the file's file system", OTF2_TYPE_STRING),
            w_.attribute("vfs.offset", "file position the call started at", OTF2_TYPE_INT64),
            w_.attribute("vfs.result", "bytes moved, or -errno", OTF2_TYPE_INT64),
            w_.attribute("vfs.derived", "1: times are the syscall's (no hook inside the VFS)",
                         OTF2_TYPE_UINT8),
            w_.attribute("fs.inode", "inode number", OTF2_TYPE_UINT64),
            w_.attribute("fs.offset", "file offset", OTF2_TYPE_INT64),
            w_.attribute("fs.bytes", "length asked for", OTF2_TYPE_INT64),
            w_.attribute("fs.result", "return value of the function", OTF2_TYPE_INT64),
            w_.attribute("fs.point", "1: a single tracepoint, no duration", OTF2_TYPE_UINT8)};
  for (const auto& f : store.files()) {
    FilePath p = file_path(f);
    files_[{f.h.pid, f.file_key, f.ino}] = {p.path, p.mount_point,
                                            bounded(f.fstype, sizeof(f.fstype))};
  }
  std::unordered_set<uint64_t> calls;
  for (const auto& s : store.syscalls()) calls.insert(s.call_id);
  for (const auto& o : store.opens()) calls.insert(o.sc.call_id);
  for (const auto& v : store.vfs()) {
    if (v.call_id && calls.count(v.call_id)) {
      vfs_by_call_[v.call_id].push_back(&v);
    } else {
      orphans_.push_back({v.t_enter, v.h.pid, v.h.tid, &v, nullptr});
    }
  }
  for (const auto& f : store.fs()) {
    if (f.call_id && calls.count(f.call_id)) {
      fs_by_call_[f.call_id].push_back(&f);
    } else {
      orphans_.push_back({f.t_enter, f.h.pid, f.h.tid, nullptr, &f});
    }
  }
  for (auto& [id, v] : vfs_by_call_) by_time(v);
  for (auto& [id, v] : fs_by_call_) by_time(v);
}

otf2::Ref NestedLayers::vfs_region(uint8_t op) {
  auto it = vfs_regions_.find(op);
  if (it != vfs_regions_.end()) return it->second;
  std::string name(vfs_op_name(op));
  if (name.empty()) name = fmt::format("vfs_op_{}", op);
  bool io = op != EZIO_VFS_OPEN;
  return vfs_regions_[op] = w_.region(name, "vfs:" + name, "eziotrace vfs layer",
                                      io ? OTF2_REGION_ROLE_FILE_IO : OTF2_REGION_ROLE_FUNCTION);
}

otf2::Ref NestedLayers::fs_region(uint16_t op) {
  auto it = fs_regions_.find(op);
  if (it != fs_regions_.end()) return it->second;
  std::string name(fs_op_name(op));
  if (name.empty()) name = fmt::format("fs_op_{}", op);
  return fs_regions_[op] =
             w_.region(name, "fs:" + name, "eziotrace fs layer", OTF2_REGION_ROLE_FILE_IO);
}

const NestedLayers::FileInfo* NestedLayers::file(uint32_t pid, const ezio_vfs_rec& v) const {
  auto it = files_.find({pid, v.file_key, v.ino});
  return it == files_.end() ? nullptr : &it->second;
}

uint64_t NestedLayers::emit_fs(OTF2_EvtWriter* evt, const ezio_fs_rec& f, uint64_t lo,
                               uint64_t hi) {
  uint64_t t0 = clamp(f.t_enter, lo, hi);
  uint64_t t1 = clamp(f.t_exit, t0, hi);
  otf2::Ref region = fs_region(f.op);
  OTF2_AttributeList* a = w_.attributes();
  OTF2_AttributeList_AddUint64(a, attrs_.fs_inode, f.ino);
  if (f.offset >= 0) OTF2_AttributeList_AddInt64(a, attrs_.fs_offset, f.offset);
  if (f.bytes >= 0) OTF2_AttributeList_AddInt64(a, attrs_.fs_bytes, f.bytes);
  bool point = f.flags & EZIO_FSF_POINT;
  if (!point) OTF2_AttributeList_AddInt64(a, attrs_.fs_result, f.ret);
  OTF2_AttributeList_AddUint8(a, attrs_.fs_point, point ? 1 : 0);
  OTF2_EvtWriter_Enter(evt, a, t0, region);
  OTF2_EvtWriter_Leave(evt, nullptr, t1, region);
  auto& totals = summary_.layers[EZIO_LAYER_FS];
  ++totals.events;
  totals.time_ns += t1 - t0;
  int64_t moved = point ? f.bytes : f.ret;
  if (fs_op_reads(f.op)) {
    ++totals.reads;
    if (moved > 0) totals.bytes_read += moved;
  } else if (fs_op_writes(f.op)) {
    ++totals.writes;
    if (moved > 0) totals.bytes_written += moved;
  } else {
    ++totals.other;
  }
  return t1;
}

uint64_t NestedLayers::emit_vfs(OTF2_EvtWriter* evt, const ezio_vfs_rec& v,
                                const std::vector<const ezio_fs_rec*>& inside, uint64_t lo,
                                uint64_t hi) {
  uint64_t t0 = clamp(v.t_enter, lo, hi);
  uint64_t t1 = clamp(v.t_exit, t0, hi);
  otf2::Ref region = vfs_region(v.op);
  OTF2_AttributeList* a = w_.attributes();
  OTF2_AttributeList_AddUint64(a, attrs_.inode, v.ino);
  OTF2_AttributeList_AddStringRef(a, attrs_.dev, w_.string(dev_text(v.dev)));
  OTF2_AttributeList_AddStringRef(a, attrs_.fstype, w_.string(bounded(v.fstype, sizeof(v.fstype))));
  if (const FileInfo* f = file(v.h.pid, v)) {
    OTF2_AttributeList_AddStringRef(a, attrs_.path, w_.string(f->path));
    OTF2_AttributeList_AddStringRef(a, attrs_.mount, w_.string(f->mount));
  }
  if (v.offset >= 0) OTF2_AttributeList_AddInt64(a, attrs_.offset, v.offset);
  OTF2_AttributeList_AddInt64(a, attrs_.result, v.ret);
  OTF2_AttributeList_AddUint8(a, attrs_.derived, v.flags & EZIO_VFSF_DERIVED ? 1 : 0);
  OTF2_EvtWriter_Enter(evt, a, t0, region);
  uint64_t cur = t0;
  for (const ezio_fs_rec* f : inside) cur = emit_fs(evt, *f, cur, t1);
  OTF2_EvtWriter_Leave(evt, nullptr, t1, region);

  auto& totals = summary_.layers[EZIO_LAYER_VFS];
  ++totals.events;
  totals.time_ns += t1 - t0;
  if (v.ret >= 0 && vfs_op_reads(v.op)) {
    ++totals.reads;
    totals.bytes_read += v.ret;
  } else if (v.ret >= 0 && vfs_op_writes(v.op)) {
    ++totals.writes;
    totals.bytes_written += v.ret;
  } else {
    ++totals.other;
  }
  return t1;
}

void NestedLayers::emit_inside(OTF2_EvtWriter* evt, uint32_t pid, uint64_t call_id, uint64_t t0,
                               uint64_t t1) {
  (void)pid;
  static const std::vector<const ezio_vfs_rec*> no_vfs;
  static const std::vector<const ezio_fs_rec*> no_fs;
  auto vi = vfs_by_call_.find(call_id);
  auto fi = fs_by_call_.find(call_id);
  const auto& vfs = vi == vfs_by_call_.end() ? no_vfs : vi->second;
  const auto& fs = fi == fs_by_call_.end() ? no_fs : fi->second;
  if (vfs.empty() && fs.empty()) return;
  // Each FS event goes into the first VFS event whose (original) interval holds it; the others
  // are written at the syscall's level, between the VFS events.
  std::vector<std::vector<const ezio_fs_rec*>> inside(vfs.size());
  std::vector<const ezio_fs_rec*> loose;
  for (const ezio_fs_rec* f : fs) {
    bool placed = false;
    for (size_t i = 0; i < vfs.size() && !placed; ++i) {
      const ezio_vfs_rec* v = vfs[i];
      bool derived = v->flags & EZIO_VFSF_DERIVED;  // the syscall's times: holds all of it
      if (derived || (f->t_enter >= v->t_enter && f->t_enter <= v->t_exit)) {
        inside[i].push_back(f);
        placed = true;
      }
    }
    if (!placed) loose.push_back(f);
  }
  uint64_t cur = t0;
  size_t li = 0;
  for (size_t i = 0; i < vfs.size(); ++i) {
    while (li < loose.size() && loose[li]->t_enter < vfs[i]->t_enter) {
      cur = emit_fs(evt, *loose[li++], cur, t1);
    }
    cur = emit_vfs(evt, *vfs[i], inside[i], cur, t1);
  }
  while (li < loose.size()) cur = emit_fs(evt, *loose[li++], cur, t1);
}

void NestedLayers::emit_orphan(OTF2_EvtWriter* evt, const Orphan& o, uint64_t& last) {
  if (o.vfs) {
    last = emit_vfs(evt, *o.vfs, {}, last, std::max<uint64_t>(last, o.vfs->t_exit));
  } else {
    last = emit_fs(evt, *o.fs, last, std::max<uint64_t>(last, o.fs->t_exit));
  }
}

}  // namespace ezio::recorder
