// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/archive/span_nesting.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <iterator>
#include <span>
#include <type_traits>
#include <vector>

#include "common/otf2/check.h"
#include "common/schema/regions.h"
#include "recorder/core/vfs_events.h"
#include "recorder/decode/fs_events.h"

namespace ezio::recorder {
namespace {

uint64_t clamp(uint64_t t, uint64_t lo, uint64_t hi) { return std::min(std::max(t, lo), hi); }

// Kernel dev_t: MAJOR << 20 | MINOR (include/linux/kdev_t.h).
std::string dev_text(uint32_t dev) { return fmt::format("{}:{}", dev >> 20, dev & 0xfffff); }

}  // namespace

NestedLayers::NestedLayers(otf2::ArchiveWriter& w, ArchiveSummary& summary, otf2::Ref machine)
    : w_(w), summary_(summary), machine_(machine) {
  vfs_regions_.fill(OTF2_UNDEFINED_REGION);
  fs_regions_.fill(OTF2_UNDEFINED_REGION);
  namespace vfs = schema::vfs;
  namespace fs = schema::fs;
  attrs_ = {w_.attribute(vfs::kInode),  w_.attribute(vfs::kDev),     w_.attribute(vfs::kFsType),
            w_.attribute(vfs::kPath),   w_.attribute(vfs::kMount),   w_.attribute(vfs::kOffset),
            w_.attribute(vfs::kResult), w_.attribute(vfs::kDerived), w_.attribute(fs::kInode),
            w_.attribute(fs::kOffset),  w_.attribute(fs::kBytes),    w_.attribute(fs::kResult),
            w_.attribute(fs::kPoint),   w_.attribute(fs::kHits),     w_.attribute(vfs::kFile)};
}

void NestedLayers::add_files(const std::vector<ezio_file_rec>& files) {
  if (!files.empty()) {  // a file looked up may have had no path yet
    for (FileStrings& f : recent_files_) f.valid = false;
  }
  for (const auto& f : files) {
    FilePath p = file_path(f);
    files_[{f.h.pid, f.file_key, f.ino}] = {w_.string(p.path), w_.string(p.mount_point),
                                            p.truncated ? std::string() : p.path, p.path,
                                            p.mount_point};
  }
}

const std::string* NestedLayers::opened_path(uint32_t pid, uint64_t call_id) const {
  if (!index_) return nullptr;
  for (const ezio_vfs_rec* v : index_->vfs.of(call_id)) {
    if (v->op != EZIO_VFS_OPEN || v->ret < 0) continue;
    const FileInfo* f = file(pid, *v);
    if (f && !f->text.empty()) return &f->text;
  }
  return nullptr;
}

otf2::Ref NestedLayers::dev_string(uint32_t dev) {
  auto it = dev_strings_.find(dev);
  if (it != dev_strings_.end()) return it->second;
  return dev_strings_[dev] = w_.string(dev_text(dev));
}

otf2::Ref NestedLayers::fstype_string(const char (&fstype)[EZIO_FSTYPE_LEN]) {
  std::string_view name(fstype, strnlen(fstype, EZIO_FSTYPE_LEN));
  auto it = fstype_strings_.find(name);
  if (it != fstype_strings_.end()) return it->second;
  return fstype_strings_[std::string(name)] = w_.string(name);
}

otf2::Ref NestedLayers::vfs_region(uint8_t op) {
  otf2::Ref* known = op < vfs_regions_.size() ? &vfs_regions_[op] : nullptr;
  if (known && *known != OTF2_UNDEFINED_REGION) return *known;
  auto it = other_vfs_regions_.find(op);
  if (it != other_vfs_regions_.end()) return it->second;
  std::string name(vfs_op_name(op));
  if (name.empty()) name = fmt::format("vfs_op_{}", op);
  bool io = op != EZIO_VFS_OPEN;
  otf2::Ref r =
      w_.region(name, schema::region_canonical_name("vfs", name), schema::region_description("vfs"),
                io ? OTF2_REGION_ROLE_FILE_IO : OTF2_REGION_ROLE_FUNCTION);
  return (known ? *known : other_vfs_regions_[op]) = r;
}

otf2::Ref NestedLayers::fs_region(uint16_t op) {
  otf2::Ref* known = op < fs_regions_.size() ? &fs_regions_[op] : nullptr;
  if (known && *known != OTF2_UNDEFINED_REGION) return *known;
  auto it = other_fs_regions_.find(op);
  if (it != other_fs_regions_.end()) return it->second;
  std::string name(fs_op_name(op));
  if (name.empty()) name = fmt::format("fs_op_{}", op);
  otf2::Ref r = w_.region(name, schema::region_canonical_name("fs", name),
                          schema::region_description("fs"), OTF2_REGION_ROLE_FILE_IO);
  return (known ? *known : other_fs_regions_[op]) = r;
}

otf2::Ref NestedLayers::derived_vfs_region(uint8_t op) {
  auto it = derived_vfs_regions_.find(op);
  if (it != derived_vfs_regions_.end()) return it->second;
  std::string name(vfs_op_name(op));
  if (name.empty()) name = fmt::format("vfs_op_{}", op);
  bool io = op != EZIO_VFS_OPEN;
  return derived_vfs_regions_[op] =
             w_.distinct_region(name, schema::region_canonical_name("vfs", name),
                                schema::vfs::kDerivedRegionDescription,
                                io ? OTF2_REGION_ROLE_FILE_IO : OTF2_REGION_ROLE_FUNCTION);
}

// One definition per (device, type, path, mount): the IoFile's name is the path ("" when
// unknown), its properties the rest (the mount only with a known path, as model 1 has them).
otf2::Ref NestedLayers::io_file(const ezio_vfs_rec& v) {
  FileStrings& strings = file_strings(v);
  if (strings.io_file != OTF2_UNDEFINED_IO_FILE) return strings.io_file;
  const FileInfo* f = strings.file;
  auto key =
      std::make_tuple(strings.dev_string, strings.fstype_string,
                      f ? f->path : OTF2_UNDEFINED_STRING, f ? f->mount : OTF2_UNDEFINED_STRING);
  auto it = io_files_.find(key);
  if (it == io_files_.end()) {
    otf2::Ref file = w_.distinct_io_file(f ? std::string_view(f->path_text) : "", machine_);
    w_.io_file_property(file, schema::vfs::kDev.name, dev_text(v.dev));
    w_.io_file_property(file, schema::vfs::kFsType.name,
                        std::string_view(v.fstype, strnlen(v.fstype, EZIO_FSTYPE_LEN)));
    if (f) w_.io_file_property(file, schema::vfs::kMount.name, f->mount_text);
    it = io_files_.emplace(key, file).first;
  }
  return strings.io_file = it->second;
}

const NestedLayers::FileInfo* NestedLayers::file(uint32_t pid, const ezio_vfs_rec& v) const {
  auto it = files_.find({pid, v.file_key, v.ino});
  return it == files_.end() ? nullptr : &it->second;
}

NestedLayers::FileStrings& NestedLayers::file_strings(const ezio_vfs_rec& v) {
  for (FileStrings& f : recent_files_) {
    if (f.valid && f.file_key == v.file_key && f.ino == v.ino && f.pid == v.h.pid &&
        f.dev == v.dev && std::memcmp(f.fstype, v.fstype, sizeof(f.fstype)) == 0) {
      return f;
    }
  }
  FileStrings& f = recent_files_[next_recent_file_++ % recent_files_.size()];
  f.pid = v.h.pid;
  f.file_key = v.file_key;
  f.ino = v.ino;
  f.dev = v.dev;
  std::memcpy(f.fstype, v.fstype, sizeof(f.fstype));
  f.file = file(v.h.pid, v);
  f.dev_string = dev_string(v.dev);
  f.fstype_string = fstype_string(v.fstype);
  f.io_file = OTF2_UNDEFINED_IO_FILE;
  f.valid = true;
  return f;
}

uint64_t NestedLayers::emit_fs(const otf2::EventWriter& evt, const ezio_fs_rec& f, uint64_t lo,
                               uint64_t hi) {
  uint64_t t0 = clamp(f.t_enter, lo, hi);
  uint64_t t1 = clamp(f.t_exit, t0, hi);
  otf2::Ref region = fs_region(f.op);
  otf2::EventAttributes a = evt.attributes();
  a.add(attrs_.fs_inode, f.ino);
  if (f.offset >= 0) a.add(attrs_.fs_offset, f.offset);
  if (f.bytes >= 0) a.add(attrs_.fs_bytes, f.bytes);
  bool point = f.flags & EZIO_FSF_POINT;
  if (!point) a.add(attrs_.fs_result, f.ret);
  a.add(attrs_.fs_point, point ? 1 : 0);
  if (f.flags & EZIO_FSF_RUN) a.add(attrs_.fs_hits, f.hits);
  evt.enter(t0, region, a);
  // A pause between the first and last hit of a merged run, or inside an exact write_iter.
  uint64_t cur = emit_throttles_before(evt, f.t_exit, t0, t1);
  evt.leave(std::max(cur, t1), region);
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

void NestedLayers::add_compact_vfs(otf2::EventAttributes& a, const ezio_vfs_rec& v, bool derived,
                                   const int64_t* call_ret) {
  a.add(attrs_.inode, v.ino).add_io_file(attrs_.file, io_file(v));
  if (v.offset >= 0) a.add(attrs_.offset, v.offset);
  // A derived event's result is its syscall's: said once, on the syscall.
  if (!derived || !call_ret || *call_ret != v.ret) a.add(attrs_.result, v.ret);
}

uint64_t NestedLayers::emit_vfs(const otf2::EventWriter& evt, const ezio_vfs_rec& v,
                                std::span<const ezio_fs_rec* const> inside, uint64_t lo,
                                uint64_t hi, const int64_t* call_ret) {
  uint64_t t0 = clamp(v.t_enter, lo, hi);
  uint64_t t1 = clamp(v.t_exit, t0, hi);
  bool derived = v.flags & EZIO_VFSF_DERIVED;
  otf2::Ref region = !full_ && derived ? derived_vfs_region(v.op) : vfs_region(v.op);
  otf2::EventAttributes a = evt.attributes();
  if (full_) {
    const FileStrings& strings = file_strings(v);
    a.add(attrs_.inode, v.ino)
        .add_string(attrs_.dev, strings.dev_string)
        .add_string(attrs_.fstype, strings.fstype_string);
    if (const FileInfo* f = strings.file) {
      a.add_string(attrs_.path, f->path).add_string(attrs_.mount, f->mount);
    }
    if (v.offset >= 0) a.add(attrs_.offset, v.offset);
    a.add(attrs_.result, v.ret).add(attrs_.derived, derived ? 1 : 0);
  } else {
    add_compact_vfs(a, v, derived, call_ret);
  }
  evt.enter(t0, region, a);
  uint64_t cur = t0;
  for (const ezio_fs_rec* f : inside) {
    cur = emit_throttles_before(evt, f->t_enter, cur, t1);
    cur = emit_fs(evt, *f, cur, t1);
  }
  cur = emit_throttles_before(evt, v.t_exit, cur, t1);
  evt.leave(t1, region);

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

void NestedLayers::emit_inside(const otf2::EventWriter& evt, uint32_t pid, uint64_t call_id,
                               uint64_t t0, uint64_t t1, int64_t ret) {
  (void)pid;
  if (!index_) return;
  auto vfs = index_->vfs.of(call_id);
  auto fs = index_->fs.of(call_id);
  throttles_ = index_->throttles.of(call_id);
  next_throttle_ = 0;
  if (vfs.empty() && fs.empty() && throttles_.empty()) return;
  // Each FS event goes into the first VFS event whose (original) interval holds it; the others
  // are written at the syscall's level, between the VFS events.
  // Scratch vectors kept across calls: this runs once per recorded syscall.
  auto& inside = inside_scratch_;
  auto& loose = loose_scratch_;
  if (inside.size() < vfs.size()) inside.resize(vfs.size());
  for (size_t i = 0; i < vfs.size(); ++i) inside[i].clear();
  loose.clear();
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
  auto loose_fs = [&] {
    cur = emit_throttles_before(evt, loose[li]->t_enter, cur, t1);
    cur = emit_fs(evt, *loose[li++], cur, t1);
  };
  for (size_t i = 0; i < vfs.size(); ++i) {
    while (li < loose.size() && loose[li]->t_enter < vfs[i]->t_enter) loose_fs();
    cur = emit_throttles_before(evt, vfs[i]->t_enter, cur, t1);
    cur = emit_vfs(evt, *vfs[i], inside[i], cur, t1, &ret);
  }
  while (li < loose.size()) loose_fs();
  emit_throttles_before(evt, UINT64_MAX, cur, t1);
  throttles_ = {};
}

uint64_t NestedLayers::emit_throttles_before(const otf2::EventWriter& evt, uint64_t until,
                                             uint64_t cur, uint64_t hi) {
  while (next_throttle_ < throttles_.size() && throttles_[next_throttle_]->t_enter < until) {
    cur = emit_throttle(evt, *throttles_[next_throttle_++], cur, hi);
  }
  return cur;
}

uint64_t NestedLayers::emit_throttle(const otf2::EventWriter& evt, const ezio_throttle_rec& r,
                                     uint64_t lo, uint64_t hi) {
  if (!throttle_defined_) {  // defined on first use: most recordings have no pause
    throttle_defined_ = true;
    throttle_region_ =
        w_.region("balance_dirty_pages", "pagecache:balance_dirty_pages",
                  "eziotrace pagecache layer: a writer put to sleep by the dirty-page limits",
                  OTF2_REGION_ROLE_FUNCTION);
    throttle_pause_ = w_.attribute(schema::throttle::kPause);
    throttle_dirtied_ = w_.attribute(schema::throttle::kDirtied);
    throttle_bdi_ = w_.attribute(schema::throttle::kBdi);
  }
  uint64_t t0 = clamp(r.t_enter, lo, hi);
  uint64_t t1 = clamp(r.t_exit, t0, hi);
  otf2::EventAttributes a = evt.attributes();
  a.add(throttle_pause_, r.pause)
      .add(throttle_dirtied_, r.dirtied)
      .add_string(throttle_bdi_, std::string_view(r.bdi, strnlen(r.bdi, sizeof(r.bdi))));
  evt.enter(t0, throttle_region_, a);
  evt.leave(t1, throttle_region_);
  return t1;
}

void NestedLayers::emit_orphan(const otf2::EventWriter& evt, const Orphan& o, uint64_t& last) {
  if (o.vfs) {
    last = emit_vfs(evt, *o.vfs, {}, last, std::max<uint64_t>(last, o.vfs->t_exit), nullptr);
  } else if (o.throttle) {
    last = emit_throttle(evt, *o.throttle, last, std::max<uint64_t>(last, o.throttle->t_exit));
  } else {
    last = emit_fs(evt, *o.fs, last, std::max<uint64_t>(last, o.fs->t_exit));
  }
}

}  // namespace ezio::recorder
