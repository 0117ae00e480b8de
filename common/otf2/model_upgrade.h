// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Reads a kernel archive of trace model 2 as model 1 (docs/trace-model.md, "Trace model 2"): every
// reader of eziotrace gets the fields where model 1 puts them, whichever model wrote the archive.
// Model 2 leaves out of each call what another of its events already says: a read, write or
// flush's syscall.bytes, syscall.result and call.id (its IoOperationBegin's request and matching
// id, its IoOperationComplete's bytes), a derived VFS event's vfs.result and vfs.derived (a region
// of its own, the syscall's result) and a VFS event's vfs.dev, vfs.fstype, vfs.path and vfs.mount
// (one vfs.file, a file definition holding them). The events of a syscall are held from its ENTER
// to its LEAVE, then handed on with those attributes back.
#include <memory>
#include <set>
#include <unordered_map>
#include <vector>

#include "common/otf2/definitions.h"
#include "common/otf2/events.h"

namespace ezio::otf2 {

class ModelUpgrade : public EventVisitor {
 public:
  // nullptr when the archive is of model 1: its events need nothing.
  static std::unique_ptr<ModelUpgrade> for_archive(const Definitions& defs, EventVisitor& inner);
  ModelUpgrade(const Definitions& defs, EventVisitor& inner);

  void begin_location(OTF2_LocationRef loc) override;
  void event(OTF2_LocationRef loc, const Event& e) override;
  void end_location(OTF2_LocationRef loc) override;

 private:
  struct FileFields {
    Ref path = OTF2_UNDEFINED_STRING, dev = OTF2_UNDEFINED_STRING, fstype = OTF2_UNDEFINED_STRING,
        mount = OTF2_UNDEFINED_STRING;
  };
  struct Refs {
    Ref fd, bytes, offset, result, call_id;
    Ref inode, dev, fstype, path, mount, vfs_offset, vfs_result, derived, file;
  };
  void flush(OTF2_LocationRef loc);
  void upgrade_call(Event& enter, const Event* begin, const Event* end) const;
  // result: the syscall's, nullptr outside any.
  void upgrade_vfs(Event& e, const int64_t* result) const;
  const Attribute* find(const Event& e, Ref id) const;

  EventVisitor& inner_;
  Refs refs_{};
  std::set<Ref> syscall_regions_, vfs_regions_, derived_regions_;
  std::unordered_map<Ref, FileFields> files_;
  std::vector<Event> pending_;  // the current syscall's events; capacity kept across calls
  size_t held_ = 0;
  int depth_ = 0;
  Event scratch_{};
  std::vector<Attribute> attrs_scratch_;
};

}  // namespace ezio::otf2
