#include "converters/merge/definition_mapper.h"

#include <fmt/format.h>

namespace ezio::converters {

otf2::Ref DefinitionMapper::string(Ref r) {
  if (const otf2::Ref* out = strings_.find(r)) return *out;
  return strings_.set(r, shared_.writer.string(defs_.str(r)));
}

otf2::Ref DefinitionMapper::region(Ref r) {
  if (const otf2::Ref* out = regions_.find(r)) return *out;
  otf2::Ref out;
  if (auto d = defs_.regions.find(r); d != defs_.regions.end()) {
    const otf2::RegionDef& def = d->second;
    std::string canonical = defs_.str(def.canonical);
    if (canonical.empty()) canonical = defs_.str(def.name);
    out = shared_.writer.region(defs_.str(def.name), canonical, defs_.str(def.description),
                                def.role, def.paradigm);
  } else {
    // A dangling region reference: keep the event, under a name that says what happened.
    std::string name = fmt::format("undefined region {}", r);
    out = shared_.writer.region(name, name, "region missing in the input archive",
                                OTF2_REGION_ROLE_UNKNOWN, OTF2_PARADIGM_UNKNOWN);
  }
  return regions_.set(r, out);
}

otf2::Ref DefinitionMapper::attribute(Ref r) {
  // Called for every attribute of every event: the writer's look-up by name is done once.
  if (const otf2::Ref* out = attributes_.find(r)) return *out;
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

otf2::Ref DefinitionMapper::io_file(Ref r) {
  if (const otf2::Ref* out = files_.find(r)) return *out;
  auto d = defs_.io_files.find(r);
  std::string path =
      d != defs_.io_files.end() ? defs_.str(d->second.name) : fmt::format("<undefined file {}>", r);
  // All inputs describe one machine: files are scoped to the merged archive's machine node.
  return files_.set(r, shared_.writer.io_file(path, shared_.machine));
}

otf2::Ref DefinitionMapper::io_handle(Ref r) {
  if (const otf2::Ref* out = handles_.find(r)) return *out;
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
    out = shared_.writer.io_handle(name, shared_.writer.io_file(name, shared_.machine),
                                   io_paradigm(paradigm));
  } else {
    const otf2::IoHandleDef& h = d->second;
    otf2::Ref file;
    std::optional<std::string> tied = file_of_handle_ ? file_of_handle_(r) : std::nullopt;
    if (tied) {
      file = shared_.writer.io_file(*tied, shared_.machine);
    } else if (defs_.io_files.count(h.file)) {
      file = io_file(h.file);
    } else {
      // EZTrace's dangling IoFile: the handle's name is the path the program opened.
      file = shared_.writer.io_file(defs_.str(h.name), shared_.machine);
    }
    otf2::Ref parent = h.parent == OTF2_UNDEFINED_IO_HANDLE || h.parent == r
                           ? OTF2_UNDEFINED_IO_HANDLE
                           : io_handle(h.parent);
    out = shared_.writer.io_handle(defs_.str(h.name), file, io_paradigm(h.paradigm), h.flags,
                                   parent, shared_.comms.comm_at(defs_, h.comm_index));
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

void DefinitionMapper::map_attributes(std::vector<Attribute>& attrs) {
  for (Attribute& a : attrs) {
    OTF2_AttributeValue& v = a.value;
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
        v.groupRef = shared_.comms.group(defs_, v.groupRef);
        break;
      default:
        break;  // plain values and location ids (kept: thread locations keep the TID)
    }
    a.id = attribute(a.id);
  }
}

// The references are mapped in the order the writer before the pipeline used (attributes first,
// then the event's own, two of them right to left as GCC evaluated its call arguments): the
// definitions are numbered by first use, so that order keeps the merged archive the same.
void DefinitionMapper::map(const Event& in, Event& out) {
  out = in;  // reuses out's vectors
  map_attributes(out.attributes);
  switch (in.kind) {
    case EventKind::Enter:
    case EventKind::Leave:
      out.ref = region(in.ref);
      break;
    case EventKind::ThreadBegin:
    case EventKind::ThreadEnd:
    case EventKind::MpiSend:
    case EventKind::MpiIsend:
    case EventKind::MpiRecv:
    case EventKind::MpiIrecv:
    case EventKind::MpiCollectiveEnd:
      out.ref = comm(in.ref);
      break;
    case EventKind::IoDuplicateHandle:
      out.ref2 = io_handle(in.ref2);
      out.ref = io_handle(in.ref);
      break;
    case EventKind::IoDeleteFile:
      out.ref2 = io_file(in.ref2);
      out.ref = io_paradigm(in.ref);
      break;
    case EventKind::Metric:
      out.ref = metric(in.ref);
      break;
    case EventKind::MpiIsendComplete:
    case EventKind::MpiIrecvRequest:
    case EventKind::MpiRequestTest:
    case EventKind::MpiRequestCancelled:
    case EventKind::MpiCollectiveBegin:
      break;  // no reference
    case EventKind::IoCreateHandle:
    case EventKind::IoDestroyHandle:
    case EventKind::IoSeek:
    case EventKind::IoChangeStatusFlags:
    case EventKind::IoOperationBegin:
    case EventKind::IoOperationTest:
    case EventKind::IoOperationIssued:
    case EventKind::IoOperationComplete:
    case EventKind::IoOperationCancelled:
      out.ref = io_handle(in.ref);
      break;
  }
}

}  // namespace ezio::converters
