// SPDX-License-Identifier: GPL-2.0-only
#include "converters/merge/definition_mapper.h"

#include <fmt/format.h>

#include "common/otf2/check.h"
#include "common/schema/attributes.h"

namespace ezio::converters {

otf2::Ref DefinitionMapper::define_string(Ref r) {
  return strings_.set(r, shared_.writer.string(defs_.str(r)));
}

otf2::Ref DefinitionMapper::define_region(Ref r) {
  otf2::Ref out;
  if (auto d = defs_.regions.find(r); d != defs_.regions.end()) {
    const otf2::RegionDef& def = d->second;
    std::string canonical = defs_.str(def.canonical);
    if (canonical.empty()) canonical = defs_.str(def.name);
    std::string_view description = defs_.str(def.description);
    if (description == schema::vfs::kDerivedRegionDescription) {
      out = derived_region(defs_.str(def.name), canonical, description, def.role);
    } else {
      out = shared_.writer.region(defs_.str(def.name), canonical, description, def.role,
                                  def.paradigm);
    }
  } else {
    // A dangling region reference: keep the event, under a name that says what happened.
    std::string name = fmt::format("undefined region {}", r);
    out = shared_.writer.region(name, name, "region missing in the input archive",
                                OTF2_REGION_ROLE_UNKNOWN, OTF2_PARADIGM_UNKNOWN);
  }
  return regions_.set(r, out);
}

otf2::Ref DefinitionMapper::define_attribute(Ref r) {
  auto d = defs_.attributes.find(r);
  otf2::Ref out =
      d == defs_.attributes.end()
          ? shared_.writer.attribute(fmt::format("undefined attribute {}", r), "", OTF2_TYPE_UINT64)
          : shared_.writer.attribute(defs_.str(d->second.name), defs_.str(d->second.description),
                                     d->second.type);
  return attributes_.set(r, out);
}

otf2::Ref DefinitionMapper::io_paradigm(Ref r) {
  std::string ident = "unknown", name = "unknown";
  OTF2_IoParadigmClass cls = OTF2_IO_PARADIGM_CLASS_SERIAL;
  OTF2_IoParadigmFlag flags = OTF2_IO_PARADIGM_FLAG_NONE;
  if (auto d = defs_.io_paradigms.find(r); d != defs_.io_paradigms.end()) {
    ident = defs_.str(d->second.identification);
    name = defs_.str(d->second.name);
    cls = d->second.cls;
    flags = d->second.flags;
  }
  if (auto it = shared_.io_paradigms.find(ident); it != shared_.io_paradigms.end()) {
    return it->second;
  }
  otf2::Ref out = shared_.writer.io_paradigm(ident, name, cls, flags);
  shared_.io_paradigms.emplace(ident, out);
  return out;
}

otf2::Ref DefinitionMapper::define_io_file(Ref r) {
  auto d = defs_.io_files.find(r);
  std::string path =
      d != defs_.io_files.end() ? defs_.str(d->second.name) : fmt::format("<undefined file {}>", r);
  // All inputs describe one machine: files are scoped to the merged archive's machine node.
  // Indexed by file once: merge-hosts' assembly maps every file of a part.
  if (file_properties_.empty() && !defs_.io_file_properties.empty()) {
    for (const auto& p : defs_.io_file_properties) {
      if (p.type == OTF2_TYPE_STRING) {
        file_properties_[p.owner].emplace_back(defs_.str(p.name), defs_.str(p.value.stringRef));
      }
    }
  }
  auto found = file_properties_.find(r);
  if (found == file_properties_.end())
    return files_.set(r, shared_.writer.io_file(path, shared_.machine));
  // Two files of one path on different devices or mounts stay two: a model 2 VFS event finds
  // its device, file system and mount through its file.
  const auto& properties = found->second;
  std::string key = fmt::format("{}\n{}", shared_.machine, path);
  for (const auto& [name, value] : properties) key += fmt::format("\n{}={}", name, value);
  auto [it, added] = shared_.described_files.try_emplace(key, 0);
  if (added) {
    it->second = shared_.writer.distinct_io_file(path, shared_.machine);
    for (const auto& [name, value] : properties) {
      shared_.writer.io_file_property(it->second, name, value);
    }
  }
  return files_.set(r, it->second);
}

// A derived VFS region keeps its own definition beside the ordinary one of its canonical name.
otf2::Ref DefinitionMapper::derived_region(std::string_view name, const std::string& canonical,
                                           std::string_view description, OTF2_RegionRole role) {
  auto [it, added] = shared_.derived_regions.try_emplace(canonical, 0);
  if (added) {
    it->second = shared_.writer.distinct_region(name, canonical, description, role);
  }
  return it->second;
}

otf2::Ref DefinitionMapper::define_io_handle(Ref r) {
  auto d = defs_.io_handles.find(r);
  otf2::Ref out;
  if (d == defs_.io_handles.end()) {
    // EZTrace's MPI ranks other than 0 lose their handle definitions. When the kernel saw the
    // open inside the user call, the handle is that file's; otherwise it says what happened.
    std::optional<std::string> tied = file_of_handle_ ? file_of_handle_(r) : std::nullopt;
    std::string name = tied ? *tied : fmt::format("<undefined handle {}>", r);
    Ref paradigm = OTF2_UNDEFINED_IO_PARADIGM;
    for (const auto& [ref, p] : defs_.io_paradigms) {
      if (!defs_.str(p.identification).empty()) {
        paradigm = ref;
        break;
      }
    }
    otf2::Ref file = shared_.writer.io_file(name, shared_.machine);
    handle_files_.set(r, file);
    out = shared_.writer.io_handle(name, file, io_paradigm(paradigm));
  } else {
    const otf2::IoHandleDef& h = d->second;
    otf2::Ref file;
    std::optional<std::string> tied = file_of_handle_ ? file_of_handle_(r) : std::nullopt;
    auto p = h.parent == r ? defs_.io_handles.end() : defs_.io_handles.find(h.parent);
    if (!tied && p != defs_.io_handles.end() && p->second.file == h.file) {
      // A handle inside its parent's file (an HDF5 dataset's in its file's): the file the
      // parent was tied to.
      io_handle(h.parent);
      const otf2::Ref* parent_file = handle_files_.find(h.parent);
      file = parent_file ? *parent_file : io_file(h.file);
    } else if (tied) {
      file = shared_.writer.io_file(*tied, shared_.machine);
    } else if (defs_.io_files.count(h.file)) {
      file = io_file(h.file);
    } else {
      // EZTrace's dangling IoFile: the handle's name is the path the program opened.
      file = shared_.writer.io_file(defs_.str(h.name), shared_.machine);
    }
    handle_files_.set(r, file);
    otf2::Ref parent = h.parent == OTF2_UNDEFINED_IO_HANDLE || h.parent == r
                           ? OTF2_UNDEFINED_IO_HANDLE
                           : io_handle(h.parent);
    out = shared_.writer.io_handle(defs_.str(h.name), file, io_paradigm(h.paradigm), h.flags,
                                   parent, shared_.comms.comm_at(comm_defs_, h.comm_index));
  }
  return handles_.set(r, out);
}

otf2::Ref DefinitionMapper::metric(Ref r) {
  if (const otf2::Ref* out = metrics_.find(r)) return *out;
  std::vector<otf2::Ref> members;
  OTF2_MetricOccurrence occurrence = OTF2_METRIC_ASYNCHRONOUS;
  OTF2_RecorderKind kind = OTF2_RECORDER_KIND_UNKNOWN;
  if (auto c = defs_.metric_classes.find(r); c != defs_.metric_classes.end()) {
    occurrence = c->second.occurrence;
    kind = c->second.kind;
    for (Ref m : c->second.members) {
      auto md = defs_.metric_members.find(m);
      if (md == defs_.metric_members.end()) continue;
      const otf2::MetricMemberDef& def = md->second;
      members.push_back(shared_.writer.metric_member(defs_.str(def.name),
                                                     defs_.str(def.description), def.type, def.mode,
                                                     def.value_type, defs_.str(def.unit)));
    }
  }
  return metrics_.set(r, shared_.writer.metric_class(std::move(members), occurrence, kind));
}

OTF2_AttributeList* DefinitionMapper::attributes(const std::vector<Attribute>& attrs) {
  if (attrs.empty()) return nullptr;
  OTF2_AttributeList* list = shared_.writer.attributes();
  for (const Attribute& a : attrs) {
    OTF2_AttributeValue v = a.value;
    switch (a.type) {
      case OTF2_TYPE_STRING:
        v.stringRef = string(v.stringRef);
        break;
      case OTF2_TYPE_REGION:
        v.regionRef = region(v.regionRef);
        break;
      case OTF2_TYPE_IO_HANDLE:
        v.ioHandleRef = io_handle(v.ioHandleRef);
        break;
      case OTF2_TYPE_IO_FILE:
        v.ioFileRef = io_file(v.ioFileRef);
        break;
      case OTF2_TYPE_ATTRIBUTE:
        v.attributeRef = attribute(v.attributeRef);
        break;
      case OTF2_TYPE_COMM:
        v.commRef = comm(v.commRef);
        break;
      case OTF2_TYPE_GROUP:
        v.groupRef = shared_.comms.group(comm_defs_, v.groupRef);
        break;
      default:
        break;  // plain values and location ids (kept: thread locations keep the TID)
    }
    OTF2_AttributeList_AddAttribute(list, attribute(a.id), a.type, v);
  }
  return list;
}

void DefinitionMapper::write(OTF2_EvtWriter* w, const Event& e, uint64_t t) {
  OTF2_AttributeList* a = attributes(e.attributes);
  OTF2_ErrorCode rc = OTF2_SUCCESS;
  switch (e.kind) {
    case EventKind::Enter:
      rc = OTF2_EvtWriter_Enter(w, a, t, region(e.ref));
      break;
    case EventKind::Leave:
      rc = OTF2_EvtWriter_Leave(w, a, t, region(e.ref));
      break;
    case EventKind::ThreadBegin:
      rc = OTF2_EvtWriter_ThreadBegin(w, a, t, comm(e.ref), e.a);
      break;
    case EventKind::ThreadEnd:
      rc = OTF2_EvtWriter_ThreadEnd(w, a, t, comm(e.ref), e.a);
      break;
    case EventKind::IoCreateHandle:
      rc = OTF2_EvtWriter_IoCreateHandle(w, a, t, io_handle(e.ref), e.f1, e.f2, e.f3);
      break;
    case EventKind::IoDestroyHandle:
      rc = OTF2_EvtWriter_IoDestroyHandle(w, a, t, io_handle(e.ref));
      break;
    case EventKind::IoDuplicateHandle:
      rc = OTF2_EvtWriter_IoDuplicateHandle(w, a, t, io_handle(e.ref), io_handle(e.ref2), e.f1);
      break;
    case EventKind::IoSeek:
      rc = OTF2_EvtWriter_IoSeek(w, a, t, io_handle(e.ref), static_cast<int64_t>(e.a),
                                 static_cast<OTF2_IoSeekOption>(e.f1), e.b);
      break;
    case EventKind::IoChangeStatusFlags:
      rc = OTF2_EvtWriter_IoChangeStatusFlags(w, a, t, io_handle(e.ref), e.f1);
      break;
    case EventKind::IoDeleteFile:
      rc = OTF2_EvtWriter_IoDeleteFile(w, a, t, io_paradigm(e.ref), io_file(e.ref2));
      break;
    case EventKind::IoOperationBegin:
      rc = OTF2_EvtWriter_IoOperationBegin(w, a, t, io_handle(e.ref),
                                           static_cast<OTF2_IoOperationMode>(e.f1), e.f2, e.a, e.b);
      break;
    case EventKind::IoOperationTest:
      rc = OTF2_EvtWriter_IoOperationTest(w, a, t, io_handle(e.ref), e.b);
      break;
    case EventKind::IoOperationIssued:
      rc = OTF2_EvtWriter_IoOperationIssued(w, a, t, io_handle(e.ref), e.b);
      break;
    case EventKind::IoOperationComplete:
      rc = OTF2_EvtWriter_IoOperationComplete(w, a, t, io_handle(e.ref), e.a, e.b);
      break;
    case EventKind::IoOperationCancelled:
      rc = OTF2_EvtWriter_IoOperationCancelled(w, a, t, io_handle(e.ref), e.b);
      break;
    case EventKind::Metric:
      rc =
          OTF2_EvtWriter_Metric(w, a, t, metric(e.ref), static_cast<uint8_t>(e.metric_types.size()),
                                e.metric_types.data(), e.metric_values.data());
      break;
    default:
      rc = write_mpi(w, e, t, a);
      break;
  }
  // After a failed flush (a full disk) OTF2 must not be given this writer's events again: it
  // aborted (a double free) when the merge went on writing.
  otf2::written(rc);
}

OTF2_ErrorCode DefinitionMapper::write_mpi(OTF2_EvtWriter* w, const Event& e, uint64_t t,
                                           OTF2_AttributeList* a) {
  switch (e.kind) {
    // Peer ranks and roots are ranks of the communicator: valid as they are (see comm_mapper.h).
    case EventKind::MpiSend:
      return OTF2_EvtWriter_MpiSend(w, a, t, e.f1, comm(e.ref), e.f2, e.a);
    case EventKind::MpiIsend:
      return OTF2_EvtWriter_MpiIsend(w, a, t, e.f1, comm(e.ref), e.f2, e.a, e.b);
    case EventKind::MpiIsendComplete:
      return OTF2_EvtWriter_MpiIsendComplete(w, a, t, e.b);
    case EventKind::MpiIrecvRequest:
      return OTF2_EvtWriter_MpiIrecvRequest(w, a, t, e.b);
    case EventKind::MpiRecv:
      return OTF2_EvtWriter_MpiRecv(w, a, t, e.f1, comm(e.ref), e.f2, e.a);
    case EventKind::MpiIrecv:
      return OTF2_EvtWriter_MpiIrecv(w, a, t, e.f1, comm(e.ref), e.f2, e.a, e.b);
    case EventKind::MpiRequestTest:
      return OTF2_EvtWriter_MpiRequestTest(w, a, t, e.b);
    case EventKind::MpiRequestCancelled:
      return OTF2_EvtWriter_MpiRequestCancelled(w, a, t, e.b);
    case EventKind::MpiCollectiveBegin:
      return OTF2_EvtWriter_MpiCollectiveBegin(w, a, t);
    case EventKind::MpiCollectiveEnd:
      return OTF2_EvtWriter_MpiCollectiveEnd(w, a, t, static_cast<OTF2_CollectiveOp>(e.f1),
                                             comm(e.ref), e.f2, e.a, e.b);
    default:
      return OTF2_SUCCESS;  // not an MPI event: write() has them all
  }
}

}  // namespace ezio::converters
