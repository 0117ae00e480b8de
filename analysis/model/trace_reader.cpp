// SPDX-License-Identifier: GPL-2.0-only
#include "analysis/model/trace_reader.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>

#include "common/schema/attributes.h"

namespace ezio::analysis {
namespace {

enum class AttrKind : uint8_t {
  kOther,
  kBytes,
  kResult,
  kOffset,
  kPoint,
  kCallId,
  kSector,
  kQueue,
  kService,
  kPid,
  kObject,
  kLayout,
  kChunkBytes
};

// Hands each event the sinks know to the sink, decoded; the others are no analyzer's concern.
class Decoder : public otf2::EventVisitor {
 public:
  Decoder(EventSink& sink, const Definitions& defs, const otf2::Definitions& archive)
      : sink_(sink), pagecache_(defs), archive_(archive) {
    for (const auto& [id, name] : defs.attributes) {
      std::string_view n = name;
      AttrKind k = n.ends_with(".bytes")           ? AttrKind::kBytes
                   : n.ends_with(".result")        ? AttrKind::kResult
                   : n.ends_with(".offset")        ? AttrKind::kOffset
                   : n.ends_with(".point")         ? AttrKind::kPoint
                   : n == schema::kCallId.name     ? AttrKind::kCallId
                   : n.ends_with(".sector")        ? AttrKind::kSector
                   : n.ends_with(".queue_ns")      ? AttrKind::kQueue
                   : n.ends_with(".service_ns")    ? AttrKind::kService
                   : n == schema::block::kPid.name ? AttrKind::kPid
                   : n == "hdf5.object"            ? AttrKind::kObject
                   : n == "hdf5.layout"            ? AttrKind::kLayout
                   : n == "hdf5.chunk_bytes"       ? AttrKind::kChunkBytes
                                                   : AttrKind::kOther;
      if (k == AttrKind::kOther) continue;
      if (id < kDenseAttributes) {
        if (dense_kinds_.size() <= id) dense_kinds_.resize(id + 1, AttrKind::kOther);
        dense_kinds_[id] = k;
      } else {
        sparse_kinds_[id] = k;
      }
    }
    find_objects();
  }

  void begin_location(OTF2_LocationRef loc) override { sink_.begin_location(loc); }
  void end_location(OTF2_LocationRef loc) override { sink_.end_location(loc); }

  void event(OTF2_LocationRef loc, const otf2::Event& e) override {
    using K = otf2::EventKind;
    switch (e.kind) {
      case K::Enter:
        sink_.enter(loc, e.time, e.ref, attributes(e));
        break;
      case K::Leave:
        sink_.leave(loc, e.time, e.ref, attributes(e));
        break;
      case K::IoOperationBegin: {
        CallAttributes a = io_attributes(e);
        sink_.io_begin(loc, e.time, described(e.ref, a), static_cast<OTF2_IoOperationMode>(e.f1),
                       e.a, e.b, a);
        break;
      }
      case K::IoOperationComplete:
        sink_.io_complete(loc, e.time, file_handle(e.ref), e.a, e.b);
        break;
      case K::IoOperationCancelled:
        sink_.io_cancelled(loc, e.time, file_handle(e.ref), e.b);
        break;
      case K::IoSeek:
        sink_.io_seek(loc, e.time, e.ref, e.b);
        break;
      case K::IoCreateHandle:
        sink_.io_create_handle(loc, e.time, e.ref);
        break;
      case K::IoDestroyHandle:
        sink_.io_destroy_handle(loc, e.time, e.ref);
        break;
      case K::Metric:
        if (auto s = pagecache_.decode(loc, e)) sink_.pagecache(loc, e.time, *s);
        break;
      default:
        break;
    }
  }

 private:
  // An HDF5 object's handle (docs/hdf5.md): named by the object's path, a child of its file's
  // handle on the same IoFile. Its transfers are handed on as the file's, with the object and
  // the layout its first transfer said (analyzers take them per transfer, as attributes).
  struct ObjectHandle {
    Ref file_handle;
    const std::string* object;  // nullptr: anonymous
    const std::string* layout = nullptr;
    uint64_t chunk_bytes = 0;
  };
  void find_objects() {
    const auto& handles = archive_.io_handles;
    for (const auto& [id, h] : handles) {
      auto parent = h.parent == id ? handles.end() : handles.find(h.parent);
      if (parent == handles.end() || parent->second.file != h.file) continue;
      auto p = archive_.io_paradigms.find(h.paradigm);
      if (p == archive_.io_paradigms.end() || archive_.str(p->second.identification) != "HDF5")
        continue;
      const std::string& name = archive_.str(h.name);
      objects_[id] = {h.parent, name.empty() ? nullptr : &name};
    }
  }
  Ref file_handle(Ref handle) const {
    if (objects_.empty()) return handle;
    auto it = objects_.find(handle);
    return it == objects_.end() ? handle : it->second.file_handle;
  }
  // The handle to hand on; an object's path and layout into `a`.
  Ref described(Ref handle, CallAttributes& a) {
    if (objects_.empty()) return handle;
    auto it = objects_.find(handle);
    if (it == objects_.end()) return handle;
    ObjectHandle& o = it->second;
    if (!a.object) a.object = o.object;
    if (a.layout) {
      o.layout = a.layout;
      o.chunk_bytes = a.chunk_bytes;
    } else {
      a.layout = o.layout;
      a.chunk_bytes = o.chunk_bytes;
    }
    return o.file_handle;
  }

  CallAttributes attributes(const otf2::Event& e) const {
    CallAttributes a;
    for (const otf2::Attribute& attr : e.attributes) {
      AttrKind kind = kind_of(attr.id);
      if (kind == AttrKind::kOther) continue;
      if (kind == AttrKind::kObject || kind == AttrKind::kLayout) {
        if (attr.type == OTF2_TYPE_STRING) {
          (kind == AttrKind::kObject ? a.object : a.layout) = &archive_.str(attr.value.stringRef);
        }
        continue;
      }
      auto v = otf2::integer_value(attr.type, attr.value);
      if (!v) continue;
      switch (kind) {
        case AttrKind::kBytes:
          a.has_bytes = true;
          a.bytes = static_cast<uint64_t>(*v);
          break;
        case AttrKind::kResult:
          a.has_result = true;
          a.result = *v;
          break;
        case AttrKind::kOffset:
          a.has_offset = true;
          a.offset = *v;
          break;
        case AttrKind::kPoint:
          a.point = *v != 0;
          break;
        case AttrKind::kCallId:
          a.call_id = static_cast<uint64_t>(*v);
          break;
        case AttrKind::kSector:
          a.has_sector = true;
          a.sector = static_cast<uint64_t>(*v);
          break;
        case AttrKind::kQueue:
          a.queue_ns = static_cast<uint64_t>(*v);
          break;
        case AttrKind::kService:
          a.service_ns = static_cast<uint64_t>(*v);
          break;
        case AttrKind::kPid:
          a.pid = static_cast<uint64_t>(*v);
          break;
        case AttrKind::kChunkBytes:
          a.chunk_bytes = static_cast<uint64_t>(*v);
          break;
        case AttrKind::kObject:
        case AttrKind::kLayout:
        case AttrKind::kOther:
          break;
      }
    }
    return a;
  }

  CallAttributes io_attributes(const otf2::Event& e) const {
    CallAttributes a = attributes(e);
    a.io_flags = static_cast<uint32_t>(e.f2);
    return a;
  }

  // Looked up for every attribute of every event: by index while ids are small, as writers
  // number them.
  static constexpr Ref kDenseAttributes = 4096;
  AttrKind kind_of(Ref id) const {
    if (id < dense_kinds_.size()) return dense_kinds_[id];
    if (id < kDenseAttributes) return AttrKind::kOther;
    auto it = sparse_kinds_.find(id);
    return it == sparse_kinds_.end() ? AttrKind::kOther : it->second;
  }

  EventSink& sink_;
  PageCacheDecoder pagecache_;
  const otf2::Definitions& archive_;
  std::vector<AttrKind> dense_kinds_;
  std::unordered_map<Ref, AttrKind> sparse_kinds_;
  std::unordered_map<Ref, ObjectHandle> objects_;
};

}  // namespace

TraceReader::TraceReader(const std::filesystem::path& path)
    : archive_(path), defs_(resolve(archive_.defs())) {}

void TraceReader::read_events(EventSink& sink,
                              const std::function<void(const otf2::ReadProgress&)>& progress,
                              const std::function<bool(OTF2_LocationRef)>& select) {
  Decoder decoder(sink, defs_, archive_.defs());
  otf2::ReadOptions options;
  options.select = select;
  options.progress = progress;
  archive_.read_events(decoder, options);
}

}  // namespace ezio::analysis
