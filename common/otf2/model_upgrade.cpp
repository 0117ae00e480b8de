// SPDX-License-Identifier: GPL-2.0-only
#include "common/otf2/model_upgrade.h"

#include <string_view>

#include "common/schema/attributes.h"
#include "common/schema/properties.h"

namespace ezio::otf2 {
namespace {

Attribute integer(Ref id, OTF2_Type type, uint64_t bits) {
  Attribute a{id, type, {}};
  a.value.uint64 = 0;
  switch (type) {
    case OTF2_TYPE_UINT8:
      a.value.uint8 = static_cast<uint8_t>(bits);
      break;
    case OTF2_TYPE_INT64:
      a.value.int64 = static_cast<int64_t>(bits);
      break;
    default:
      a.value.uint64 = bits;
      break;
  }
  return a;
}

Attribute string_attribute(Ref id, Ref string) {
  Attribute a{id, OTF2_TYPE_STRING, {}};
  a.value.stringRef = string;
  return a;
}

}  // namespace

std::unique_ptr<ModelUpgrade> ModelUpgrade::for_archive(const Definitions& defs,
                                                        EventVisitor& inner) {
  auto model = defs.node_property(schema::kTraceModel);
  if (!model || *model < schema::kTraceModelCompact) return nullptr;
  return std::make_unique<ModelUpgrade>(defs, inner);
}

ModelUpgrade::ModelUpgrade(const Definitions& defs, EventVisitor& inner) : inner_(inner) {
  auto ref = [&](const schema::AttributeSpec& spec) {
    for (const auto& [id, a] : defs.attributes) {
      if (defs.str(a.name) == spec.name) return id;
    }
    return Ref(OTF2_UNDEFINED_ATTRIBUTE);
  };
  namespace sc = schema::syscall;
  namespace vfs = schema::vfs;
  refs_ = {ref(sc::kFd),         ref(sc::kBytes),  ref(sc::kOffset),  ref(sc::kResult),
           ref(schema::kCallId), ref(vfs::kInode), ref(vfs::kDev),    ref(vfs::kFsType),
           ref(vfs::kPath),      ref(vfs::kMount), ref(vfs::kOffset), ref(vfs::kResult),
           ref(vfs::kDerived),   ref(vfs::kFile)};
  for (const auto& [id, r] : defs.regions) {
    std::string_view canonical = defs.str(r.canonical);
    if (canonical.starts_with("syscall:")) syscall_regions_.insert(id);
    if (canonical.starts_with("vfs:")) {
      vfs_regions_.insert(id);
      if (defs.str(r.description) == vfs::kDerivedRegionDescription) derived_regions_.insert(id);
    }
  }
  for (const auto& [id, f] : defs.io_files) files_[id].path = f.name;
  for (const auto& p : defs.io_file_properties) {
    if (p.type != OTF2_TYPE_STRING) continue;
    std::string_view name = defs.str(p.name);
    FileFields& f = files_[p.owner];
    if (name == vfs::kDev.name) f.dev = p.value.stringRef;
    if (name == vfs::kFsType.name) f.fstype = p.value.stringRef;
    if (name == vfs::kMount.name) f.mount = p.value.stringRef;
  }
}

void ModelUpgrade::begin_location(OTF2_LocationRef loc) {
  held_ = 0;
  depth_ = 0;
  inner_.begin_location(loc);
}

void ModelUpgrade::end_location(OTF2_LocationRef loc) {
  flush(loc);  // a syscall without its LEAVE: handed on as it is
  inner_.end_location(loc);
}

void ModelUpgrade::event(OTF2_LocationRef loc, const Event& e) {
  if (held_ == 0) {
    if (e.kind == EventKind::Enter && syscall_regions_.count(e.ref)) {
      depth_ = 0;  // counted below
    } else {
      if (e.kind == EventKind::Enter && vfs_regions_.count(e.ref)) {  // outside any syscall
        scratch_ = e;
        upgrade_vfs(scratch_, nullptr);
        inner_.event(loc, scratch_);
      } else {
        inner_.event(loc, e);
      }
      return;
    }
  }
  if (pending_.size() <= held_) pending_.emplace_back();
  pending_[held_++] = e;  // keeps the vectors' room
  if (e.kind == EventKind::Enter) ++depth_;
  if (e.kind == EventKind::Leave && --depth_ <= 0) flush(loc);
}

void ModelUpgrade::flush(OTF2_LocationRef loc) {
  if (held_ == 0) return;
  const Event *begin = nullptr, *end = nullptr;
  for (size_t i = 1; i < held_; ++i) {
    const Event& e = pending_[i];
    if (e.kind == EventKind::IoOperationBegin && !begin) begin = &e;
    if ((e.kind == EventKind::IoOperationComplete || e.kind == EventKind::IoOperationCancelled) &&
        !end)
      end = &e;
  }
  Event& enter = pending_[0];
  upgrade_call(enter, begin, end);
  const Attribute* r = find(enter, refs_.result);
  std::optional<int64_t> result = r ? integer_value(r->type, r->value) : std::nullopt;
  for (size_t i = 1; i < held_; ++i) {
    Event& e = pending_[i];
    if (e.kind == EventKind::Enter && vfs_regions_.count(e.ref)) {
      upgrade_vfs(e, result ? &*result : nullptr);
    }
  }
  size_t n = held_;
  held_ = 0;
  depth_ = 0;
  for (size_t i = 0; i < n; ++i) inner_.event(loc, pending_[i]);
}

const Attribute* ModelUpgrade::find(const Event& e, Ref id) const {
  for (const Attribute& a : e.attributes) {
    if (a.id == id) return &a;
  }
  return nullptr;
}

// Model 1's order: fd, bytes, offset, result, call id.
void ModelUpgrade::upgrade_call(Event& enter, const Event* begin, const Event* end) const {
  if (!begin || find(enter, refs_.call_id) || refs_.call_id == OTF2_UNDEFINED_ATTRIBUTE) return;
  const Attribute* fd = find(enter, refs_.fd);
  const Attribute* bytes = find(enter, refs_.bytes);
  const Attribute* offset = find(enter, refs_.offset);
  const Attribute* result = find(enter, refs_.result);
  std::vector<Attribute> out;
  out.reserve(5);
  if (fd) out.push_back(*fd);
  bool moves_data =
      begin->f1 == OTF2_IO_OPERATION_MODE_READ || begin->f1 == OTF2_IO_OPERATION_MODE_WRITE;
  if (bytes) {
    out.push_back(*bytes);
  } else if (moves_data) {
    out.push_back(integer(refs_.bytes, OTF2_TYPE_UINT64, begin->a));
  }
  if (offset) out.push_back(*offset);
  if (result) {
    out.push_back(*result);
  } else if (end && end->kind == EventKind::IoOperationComplete) {
    out.push_back(integer(refs_.result, OTF2_TYPE_INT64, end->a));
  }
  out.push_back(integer(refs_.call_id, OTF2_TYPE_UINT64, begin->b));
  enter.attributes.assign(out.begin(), out.end());
}

// Model 1's order: inode, dev, fstype, path, mount, offset, result, derived.
void ModelUpgrade::upgrade_vfs(Event& e, const int64_t* result) const {
  const Attribute* file = find(e, refs_.file);
  if (!file) return;  // model 1's already
  const Attribute* inode = find(e, refs_.inode);
  const Attribute* offset = find(e, refs_.vfs_offset);
  const Attribute* own_result = find(e, refs_.vfs_result);
  bool derived = derived_regions_.count(e.ref);
  std::vector<Attribute> out;
  out.reserve(8);
  if (inode) out.push_back(*inode);
  auto f = files_.find(file->value.ioFileRef);
  if (f != files_.end()) {
    const FileFields& ff = f->second;
    if (ff.dev != OTF2_UNDEFINED_STRING) out.push_back(string_attribute(refs_.dev, ff.dev));
    if (ff.fstype != OTF2_UNDEFINED_STRING)
      out.push_back(string_attribute(refs_.fstype, ff.fstype));
    if (ff.mount != OTF2_UNDEFINED_STRING) {  // a known path has its mount
      out.push_back(string_attribute(refs_.path, ff.path));
      out.push_back(string_attribute(refs_.mount, ff.mount));
    }
  }
  if (offset) out.push_back(*offset);
  if (own_result) {
    out.push_back(*own_result);
  } else if (result) {
    out.push_back(integer(refs_.vfs_result, OTF2_TYPE_INT64, static_cast<uint64_t>(*result)));
  }
  out.push_back(integer(refs_.derived, OTF2_TYPE_UINT8, derived ? 1 : 0));
  e.attributes.assign(out.begin(), out.end());
}

}  // namespace ezio::otf2
