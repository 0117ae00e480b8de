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

  // A VFS, FS or throttling event with no recorded syscall around it (none was in flight, e.g.
  // the vfs_open of an execve or a write fault of a mapping, or its syscall record was lost):
  // written on its own, in time order.
  struct Orphan {
    uint64_t t;
    uint32_t pid, tid;
    const ezio_vfs_rec* vfs;  // one of vfs, fs, throttle is set
    const ezio_fs_rec* fs;
    const ezio_throttle_rec* throttle;
  };

  // The paths of the files VFS events refer to; they may arrive after the first such event's
  // record, but before the archive writer takes it (see RecordStore::take_settled).
  void add_files(const std::vector<ezio_file_rec>& files);
  // Takes a batch: the VFS and FS records that arrived and the calls that are written next. The
  // records of those calls are indexed for emit_inside(); those of a call still to come wait for
  // a later batch; the others become orphans() (all of them when `last`: no call will come).
  void take(std::vector<ezio_vfs_rec>&& vfs, std::vector<ezio_fs_rec>&& fs,
            std::vector<ezio_throttle_rec>&& throttles,
            const std::vector<ezio_syscall_rec>& syscalls, const std::vector<OpenCall>& opens,
            bool last);
  // The orphans of the batch last taken; valid until the next take().
  const std::vector<Orphan>& orphans() const { return orphans_; }

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
  // Whether a call of this thread with a higher id was written: calls of a thread are sequential
  // and ids grow, so a lower id's syscall record will never come.
  bool passed(uint32_t pid, uint32_t tid, uint64_t call_id) const;
  // The VFS or FS records of each call of a batch: a range of a vector sorted by (call id, time),
  // found in a vector sorted by call id: the calls are asked for in time order, which is each
  // thread's call id order, so the next range is most often the one after the last found (no
  // hashing, no allocation per call); else a binary search.
  template <typename Rec>
  struct ByCall {
    struct Range {
      uint64_t call_id;
      uint32_t begin, end;
      bool called;  // the call's syscall record is in the batch
    };
    std::vector<Rec> owned;    // the batch's records, with those that waited for their call
    std::vector<Rec> waiting;  // records whose call is still to come
    std::vector<const Rec*> sorted;
    std::vector<Range> ranges;  // by call id
    mutable size_t hint = 0;    // the range after the one last found
    void build(std::vector<Rec>&& records, const std::vector<ezio_syscall_rec>& syscalls,
               const std::vector<OpenCall>& opens, bool last, const NestedLayers& layers,
               std::vector<Orphan>& orphans);
    Range* find(uint64_t call_id) const;
    std::span<const Rec* const> of(uint64_t call_id) const;
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
  ByCall<ezio_vfs_rec> vfs_by_call_;
  ByCall<ezio_fs_rec> fs_by_call_;
  ByCall<ezio_throttle_rec> throttle_by_call_;
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
  std::vector<Orphan> orphans_;
  std::unordered_map<uint64_t, uint64_t> last_call_;  // pid << 32 | tid -> highest call id taken
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
