// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Nests the VFS and FS layers, and the dirty-throttling pauses of the page-cache layer, inside the
// syscalls on each thread's location (syscall -> VFS -> FS -> pagecache:balance_dirty_pages
// ENTER/LEAVE), with timestamps clamped into the parent so that every location stays properly
// nested and non-decreasing (OTF2 refuses decreasing timestamps).
#include <array>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "common/otf2/writer.h"
#include "recorder/archive/call_index.h"
#include "recorder/archive/kernel_archive.h"
#include "recorder/decode/record_store.h"

namespace ezio::recorder {

class NestedLayers {
 public:
  // machine: the scope of model 2's file definitions.
  NestedLayers(otf2::ArchiveWriter& w, ArchiveSummary& summary, otf2::Ref machine);
  // Trace model 1 (every field on every event) instead of 2 (docs/trace-model.md): for the merged
  // mode's tap, whose merge copies the events as they are.
  void full_attributes(bool full) { full_ = full; }

  using Orphan = recorder::Orphan;

  // The paths of the files VFS events refer to; they may arrive after the first such event's
  // record, but before the archive writer takes it (see RecordStore::take_settled).
  void add_files(const std::vector<ezio_file_rec>& files);
  // The VFS, FS and throttling records of the batch written next, by call (CallIndexer); it must
  // outlive the batch's writing. nullptr between batches.
  void use(const CallIndex* index) { index_ = index; }

  // Writes the events of call `call_id` of process pid inside [t0, t1], the syscall's ENTER and
  // LEAVE times as written; ret is the syscall's result (a derived VFS event's, model 2 omits it).
  void emit_inside(const otf2::EventWriter& evt, uint32_t pid, uint64_t call_id, uint64_t t0,
                   uint64_t t1, int64_t ret);
  // The path of the file open call `call_id` of process pid opened, as the kernel walked it from
  // the file's dentry up through its mounts (VFS layer); nullptr when unknown or truncated.
  const std::string* opened_path(uint32_t pid, uint64_t call_id) const;
  // Writes an orphan at or after `last` (the location's last timestamp), and advances `last`.
  void emit_orphan(const otf2::EventWriter& evt, const Orphan& o, uint64_t& last);

 private:
  // A file's strings, interned once: every VFS event on it carries them.
  struct FileInfo {
    otf2::Ref path, mount;
    std::string text;  // the path, empty when the walk was truncated
    std::string path_text, mount_text;
  };
  struct Attrs {
    otf2::TypedAttribute inode, dev, fstype, path, mount, offset, result, derived;
    otf2::TypedAttribute fs_inode, fs_offset, fs_bytes, fs_result, fs_point, fs_hits;
    otf2::TypedAttribute file;
  };
  // Writes one VFS event (and the FS events inside it) within [lo, hi]; returns its LEAVE time.
  // call_ret: the syscall's result, nullptr outside any syscall.
  uint64_t emit_vfs(const otf2::EventWriter& evt, const ezio_vfs_rec& v,
                    std::span<const ezio_fs_rec* const> inside, uint64_t lo, uint64_t hi,
                    const int64_t* call_ret);
  // Model 2's attributes of a VFS event (docs/trace-model.md).
  void add_compact_vfs(otf2::EventAttributes& a, const ezio_vfs_rec& v, bool derived,
                       const int64_t* call_ret);
  otf2::Ref io_file(const ezio_vfs_rec& v);
  otf2::Ref dev_string(uint32_t dev);
  otf2::Ref fstype_string(const char (&fstype)[EZIO_FSTYPE_LEN]);
  uint64_t emit_fs(const otf2::EventWriter& evt, const ezio_fs_rec& f, uint64_t lo, uint64_t hi);
  // Writes one throttling pause within [lo, hi]; returns its LEAVE time.
  uint64_t emit_throttle(const otf2::EventWriter& evt, const ezio_throttle_rec& r, uint64_t lo,
                         uint64_t hi);
  // Writes the pauses of the call being written (throttles_) that began before `until`, from
  // `cur` on, within hi; returns the time reached.
  uint64_t emit_throttles_before(const otf2::EventWriter& evt, uint64_t until, uint64_t cur,
                                 uint64_t hi);
  otf2::Ref vfs_region(uint8_t op);
  otf2::Ref derived_vfs_region(uint8_t op);
  otf2::Ref fs_region(uint16_t op);
  const FileInfo* file(uint32_t pid, const ezio_vfs_rec& v) const;
  // What a VFS event on a file carries besides its own fields, looked up once for the events on
  // the few files a process works on at a time (a copy alternates two).
  struct FileStrings {
    uint32_t pid = 0, dev = 0;
    uint64_t file_key = 0, ino = 0;
    char fstype[EZIO_FSTYPE_LEN] = {};
    bool valid = false;
    const FileInfo* file = nullptr;
    otf2::Ref dev_string = 0, fstype_string = 0;
    otf2::Ref io_file = OTF2_UNDEFINED_IO_FILE;  // model 2, defined on first use
  };
  FileStrings& file_strings(const ezio_vfs_rec& v);

  otf2::ArchiveWriter& w_;
  ArchiveSummary& summary_;
  Attrs attrs_{};
  const CallIndex* index_ = nullptr;
  std::span<const ezio_throttle_rec* const> throttles_;  // of the call emit_inside writes
  size_t next_throttle_ = 0;
  otf2::Ref throttle_region_ = 0;
  otf2::TypedAttribute throttle_pause_, throttle_bdi_, throttle_dirtied_;
  bool throttle_defined_ = false;
  std::map<std::tuple<uint32_t, uint64_t, uint64_t>, FileInfo> files_;  // pid, file_key, ino
  std::unordered_map<uint32_t, otf2::Ref> dev_strings_;
  std::vector<std::vector<const ezio_fs_rec*>> inside_scratch_;
  std::vector<const ezio_fs_rec*> loose_scratch_;
  std::map<std::string, otf2::Ref, std::less<>> fstype_strings_;
  std::array<FileStrings, 4> recent_files_;
  size_t next_recent_file_ = 0;
  // By op; OTF2_UNDEFINED_REGION until the first event of the op. Ops beyond the known ones (a
  // newer kernel side) in the map.
  std::array<otf2::Ref, EZIO_VFS_OP_COUNT> vfs_regions_;
  std::array<otf2::Ref, EZIO_FS_OP_COUNT> fs_regions_;
  std::map<uint32_t, otf2::Ref> other_vfs_regions_, other_fs_regions_;
  std::map<uint32_t, otf2::Ref> derived_vfs_regions_;
  // Model 2's files: (dev, fstype, path, mount) strings -> IoFile.
  std::map<std::tuple<otf2::Ref, otf2::Ref, otf2::Ref, otf2::Ref>, otf2::Ref> io_files_;
  bool full_ = false;
  otf2::Ref machine_;
};

}  // namespace ezio::recorder
