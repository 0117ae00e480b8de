#include <fmt/format.h>

#include <climits>
#include <memory>

#include "common/error.h"
#include "common/otf2/check.h"
#include "converters/archive_model.h"

namespace ezio::converters {
namespace {

struct ReaderDeleter {
  void operator()(OTF2_Reader* r) const { OTF2_Reader_Close(r); }
};
using ReaderPtr = std::unique_ptr<OTF2_Reader, ReaderDeleter>;

template <typename T, void (*Delete)(T*)>
struct CallbacksDeleter {
  void operator()(T* c) const { Delete(c); }
};
using DefCallbacksPtr = std::unique_ptr<
    OTF2_GlobalDefReaderCallbacks,
    CallbacksDeleter<OTF2_GlobalDefReaderCallbacks, OTF2_GlobalDefReaderCallbacks_Delete>>;
using EvtCallbacksPtr =
    std::unique_ptr<OTF2_EvtReaderCallbacks,
                    CallbacksDeleter<OTF2_EvtReaderCallbacks, OTF2_EvtReaderCallbacks_Delete>>;

constexpr auto kOk = OTF2_CALLBACK_SUCCESS;

Definitions& defs(void* p) { return static_cast<Archive*>(p)->defs; }

void set_definition_callbacks(OTF2_GlobalDefReaderCallbacks* c) {
  OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(
      c, +[](void* u, uint64_t res, uint64_t offset, uint64_t length, uint64_t realtime) {
        auto& d = defs(u);
        d.resolution = res;
        d.global_offset = offset;
        d.trace_length = length;
        d.realtime = realtime;
        return kOk;
      });
  OTF2_GlobalDefReaderCallbacks_SetStringCallback(
      c, +[](void* u, OTF2_StringRef self, const char* s) {
        if (!defs(u).strings.try_emplace(self, s ? s : "").second) ++defs(u).duplicate_definitions;
        return kOk;
      });
  OTF2_GlobalDefReaderCallbacks_SetSystemTreeNodeCallback(
      c, +[](void* u, OTF2_SystemTreeNodeRef self, OTF2_StringRef name, OTF2_StringRef cls,
             OTF2_SystemTreeNodeRef parent) {
        defs(u).nodes.try_emplace(self, NodeDef{name, cls, parent});
        return kOk;
      });
  OTF2_GlobalDefReaderCallbacks_SetLocationGroupCallback(
      c, +[](void* u, OTF2_LocationGroupRef self, OTF2_StringRef name, OTF2_LocationGroupType type,
             OTF2_SystemTreeNodeRef node, OTF2_LocationGroupRef) {
        defs(u).location_groups.try_emplace(self, LocationGroupDef{name, type, node});
        return kOk;
      });
  OTF2_GlobalDefReaderCallbacks_SetLocationCallback(
      c, +[](void* u, OTF2_LocationRef self, OTF2_StringRef name, OTF2_LocationType type, uint64_t,
             OTF2_LocationGroupRef group) {
        // The event count is not kept: EZTrace's is wrong, and the writer counts again.
        defs(u).locations.try_emplace(self, LocationDef{name, type, group});
        return kOk;
      });
  OTF2_GlobalDefReaderCallbacks_SetRegionCallback(
      c, +[](void* u, OTF2_RegionRef self, OTF2_StringRef name, OTF2_StringRef canonical,
             OTF2_StringRef description, OTF2_RegionRole role, OTF2_Paradigm paradigm,
             OTF2_RegionFlag, OTF2_StringRef, uint32_t, uint32_t) {
        defs(u).regions.try_emplace(self, RegionDef{name, canonical, description, role, paradigm});
        return kOk;
      });
  OTF2_GlobalDefReaderCallbacks_SetAttributeCallback(
      c, +[](void* u, OTF2_AttributeRef self, OTF2_StringRef name, OTF2_StringRef description,
             OTF2_Type type) {
        defs(u).attributes.try_emplace(self, AttributeDef{name, description, type});
        return kOk;
      });
  OTF2_GlobalDefReaderCallbacks_SetIoParadigmCallback(
      c, +[](void* u, OTF2_IoParadigmRef self, OTF2_StringRef ident, OTF2_StringRef name,
             OTF2_IoParadigmClass cls, OTF2_IoParadigmFlag flags, uint8_t,
             const OTF2_IoParadigmProperty*, const OTF2_Type*, const OTF2_AttributeValue*) {
        defs(u).io_paradigms.try_emplace(self, IoParadigmDef{ident, name, cls, flags});
        return kOk;
      });
  OTF2_GlobalDefReaderCallbacks_SetIoRegularFileCallback(
      c, +[](void* u, OTF2_IoFileRef self, OTF2_StringRef name, OTF2_SystemTreeNodeRef scope) {
        defs(u).io_files.try_emplace(self, IoFileDef{name, scope});
        return kOk;
      });
  OTF2_GlobalDefReaderCallbacks_SetIoDirectoryCallback(
      c, +[](void* u, OTF2_IoFileRef self, OTF2_StringRef name, OTF2_SystemTreeNodeRef scope) {
        defs(u).io_files.try_emplace(self, IoFileDef{name, scope});
        return kOk;
      });
  OTF2_GlobalDefReaderCallbacks_SetIoHandleCallback(
      c, +[](void* u, OTF2_IoHandleRef self, OTF2_StringRef name, OTF2_IoFileRef file,
             OTF2_IoParadigmRef paradigm, OTF2_IoHandleFlag flags, OTF2_CommRef comm,
             OTF2_IoHandleRef parent) {
        auto& d = defs(u);
        size_t index = SIZE_MAX;  // the latest comm of that id defined so far
        for (size_t i = 0; i < d.comms.size(); ++i) {
          if (d.comms[i].id == comm) index = i;
        }
        d.io_handles.try_emplace(self,
                                 IoHandleDef{name, file, paradigm, flags, comm, parent, index});
        return kOk;
      });
  OTF2_GlobalDefReaderCallbacks_SetGroupCallback(
      c, +[](void* u, OTF2_GroupRef self, OTF2_StringRef name, OTF2_GroupType type,
             OTF2_Paradigm paradigm, OTF2_GroupFlag flags, uint32_t n, const uint64_t* members) {
        auto& d = defs(u);
        for (const auto& g : d.groups) {
          if (g.id == self) ++d.duplicate_definitions;
        }
        d.groups.push_back(
            {self, name, type, paradigm, flags, std::vector<uint64_t>(members, members + n)});
        return kOk;
      });
  OTF2_GlobalDefReaderCallbacks_SetCommCallback(
      c, +[](void* u, OTF2_CommRef self, OTF2_StringRef name, OTF2_GroupRef group,
             OTF2_CommRef parent, OTF2_CommFlag) {
        auto& d = defs(u);
        for (const auto& x : d.comms) {
          if (x.id == self) ++d.duplicate_definitions;
        }
        size_t index = SIZE_MAX;  // the latest group of that id defined so far
        for (size_t i = 0; i < d.groups.size(); ++i) {
          if (d.groups[i].id == group) index = i;
        }
        d.comms.push_back({self, name, index, parent});
        return kOk;
      });
  OTF2_GlobalDefReaderCallbacks_SetMetricMemberCallback(
      c, +[](void* u, OTF2_MetricMemberRef self, OTF2_StringRef name, OTF2_StringRef description,
             OTF2_MetricType type, OTF2_MetricMode mode, OTF2_Type value_type, OTF2_Base, int64_t,
             OTF2_StringRef unit) {
        defs(u).metric_members.try_emplace(
            self, MetricMemberDef{name, description, type, mode, value_type, unit});
        return kOk;
      });
  OTF2_GlobalDefReaderCallbacks_SetMetricClassCallback(
      c, +[](void* u, OTF2_MetricRef self, uint8_t n, const OTF2_MetricMemberRef* members,
             OTF2_MetricOccurrence occurrence, OTF2_RecorderKind kind) {
        defs(u).metric_classes.try_emplace(
            self, MetricClassDef{std::vector<Ref>(members, members + n), occurrence, kind});
        return kOk;
      });
  OTF2_GlobalDefReaderCallbacks_SetSystemTreeNodePropertyCallback(
      c, +[](void* u, OTF2_SystemTreeNodeRef node, OTF2_StringRef name, OTF2_Type type,
             OTF2_AttributeValue value) {
        defs(u).node_properties.push_back({node, name, type, value});
        return kOk;
      });
  OTF2_GlobalDefReaderCallbacks_SetLocationGroupPropertyCallback(
      c, +[](void* u, OTF2_LocationGroupRef group, OTF2_StringRef name, OTF2_Type type,
             OTF2_AttributeValue value) {
        defs(u).group_properties.push_back({group, name, type, value});
        return kOk;
      });
  OTF2_GlobalDefReaderCallbacks_SetLocationPropertyCallback(
      c, +[](void* u, OTF2_LocationRef loc, OTF2_StringRef name, OTF2_Type type,
             OTF2_AttributeValue value) {
        defs(u).location_properties.push_back({loc, name, type, value});
        return kOk;
      });
}

// Appends an event of the given kind at the current location and returns it for the caller to
// fill in.
Event& push(void* u, OTF2_LocationRef loc, OTF2_TimeStamp t, OTF2_AttributeList* attrs,
            EventKind kind) {
  auto& list = static_cast<Archive*>(u)->events[loc];
  Event& e = list.emplace_back();
  e.kind = kind;
  e.time = t;
  uint32_t n = attrs ? OTF2_AttributeList_GetNumberOfElements(attrs) : 0;
  for (uint32_t i = 0; i < n; ++i) {
    Attribute a{};
    if (OTF2_AttributeList_GetAttributeByIndex(attrs, i, &a.id, &a.type, &a.value) ==
        OTF2_SUCCESS) {
      e.attributes.push_back(a);
    }
  }
  return e;
}

#define EZIO_EVT_ARGS \
  OTF2_LocationRef loc, OTF2_TimeStamp t, uint64_t, void *u, OTF2_AttributeList *attrs

void set_event_callbacks(OTF2_EvtReaderCallbacks* c) {
  OTF2_EvtReaderCallbacks_SetEnterCallback(
      c, +[](EZIO_EVT_ARGS, OTF2_RegionRef r) {
        push(u, loc, t, attrs, EventKind::Enter).ref = r;
        return kOk;
      });
  OTF2_EvtReaderCallbacks_SetLeaveCallback(
      c, +[](EZIO_EVT_ARGS, OTF2_RegionRef r) {
        push(u, loc, t, attrs, EventKind::Leave).ref = r;
        return kOk;
      });
  OTF2_EvtReaderCallbacks_SetThreadBeginCallback(
      c, +[](EZIO_EVT_ARGS, OTF2_CommRef comm, uint64_t seq) {
        Event& e = push(u, loc, t, attrs, EventKind::ThreadBegin);
        e.ref = comm;
        e.a = seq;
        return kOk;
      });
  OTF2_EvtReaderCallbacks_SetThreadEndCallback(
      c, +[](EZIO_EVT_ARGS, OTF2_CommRef comm, uint64_t seq) {
        Event& e = push(u, loc, t, attrs, EventKind::ThreadEnd);
        e.ref = comm;
        e.a = seq;
        return kOk;
      });
  OTF2_EvtReaderCallbacks_SetIoCreateHandleCallback(
      c, +[](EZIO_EVT_ARGS, OTF2_IoHandleRef h, OTF2_IoAccessMode mode, OTF2_IoCreationFlag cf,
             OTF2_IoStatusFlag sf) {
        Event& e = push(u, loc, t, attrs, EventKind::IoCreateHandle);
        e.ref = h;
        e.f1 = mode;
        e.f2 = cf;
        e.f3 = sf;
        return kOk;
      });
  OTF2_EvtReaderCallbacks_SetIoDestroyHandleCallback(
      c, +[](EZIO_EVT_ARGS, OTF2_IoHandleRef h) {
        push(u, loc, t, attrs, EventKind::IoDestroyHandle).ref = h;
        return kOk;
      });
  OTF2_EvtReaderCallbacks_SetIoDuplicateHandleCallback(
      c, +[](EZIO_EVT_ARGS, OTF2_IoHandleRef old_h, OTF2_IoHandleRef new_h, OTF2_IoStatusFlag sf) {
        Event& e = push(u, loc, t, attrs, EventKind::IoDuplicateHandle);
        e.ref = old_h;
        e.ref2 = new_h;
        e.f1 = sf;
        return kOk;
      });
  OTF2_EvtReaderCallbacks_SetIoSeekCallback(
      c, +[](EZIO_EVT_ARGS, OTF2_IoHandleRef h, int64_t request, OTF2_IoSeekOption whence,
             uint64_t result) {
        Event& e = push(u, loc, t, attrs, EventKind::IoSeek);
        e.ref = h;
        e.a = static_cast<uint64_t>(request);
        e.f1 = whence;
        e.b = result;
        return kOk;
      });
  OTF2_EvtReaderCallbacks_SetIoChangeStatusFlagsCallback(
      c, +[](EZIO_EVT_ARGS, OTF2_IoHandleRef h, OTF2_IoStatusFlag sf) {
        Event& e = push(u, loc, t, attrs, EventKind::IoChangeStatusFlags);
        e.ref = h;
        e.f1 = sf;
        return kOk;
      });
  OTF2_EvtReaderCallbacks_SetIoDeleteFileCallback(
      c, +[](EZIO_EVT_ARGS, OTF2_IoParadigmRef p, OTF2_IoFileRef f) {
        Event& e = push(u, loc, t, attrs, EventKind::IoDeleteFile);
        e.ref = p;
        e.ref2 = f;
        return kOk;
      });
  OTF2_EvtReaderCallbacks_SetIoOperationBeginCallback(
      c, +[](EZIO_EVT_ARGS, OTF2_IoHandleRef h, OTF2_IoOperationMode mode,
             OTF2_IoOperationFlag flags, uint64_t bytes, uint64_t matching) {
        Event& e = push(u, loc, t, attrs, EventKind::IoOperationBegin);
        e.ref = h;
        e.f1 = mode;
        e.f2 = flags;
        e.a = bytes;
        e.b = matching;
        return kOk;
      });
  OTF2_EvtReaderCallbacks_SetIoOperationTestCallback(
      c, +[](EZIO_EVT_ARGS, OTF2_IoHandleRef h, uint64_t matching) {
        Event& e = push(u, loc, t, attrs, EventKind::IoOperationTest);
        e.ref = h;
        e.b = matching;
        return kOk;
      });
  OTF2_EvtReaderCallbacks_SetIoOperationIssuedCallback(
      c, +[](EZIO_EVT_ARGS, OTF2_IoHandleRef h, uint64_t matching) {
        Event& e = push(u, loc, t, attrs, EventKind::IoOperationIssued);
        e.ref = h;
        e.b = matching;
        return kOk;
      });
  OTF2_EvtReaderCallbacks_SetIoOperationCompleteCallback(
      c, +[](EZIO_EVT_ARGS, OTF2_IoHandleRef h, uint64_t bytes, uint64_t matching) {
        Event& e = push(u, loc, t, attrs, EventKind::IoOperationComplete);
        e.ref = h;
        e.a = bytes;
        e.b = matching;
        return kOk;
      });
  OTF2_EvtReaderCallbacks_SetIoOperationCancelledCallback(
      c, +[](EZIO_EVT_ARGS, OTF2_IoHandleRef h, uint64_t matching) {
        Event& e = push(u, loc, t, attrs, EventKind::IoOperationCancelled);
        e.ref = h;
        e.b = matching;
        return kOk;
      });
  OTF2_EvtReaderCallbacks_SetMpiSendCallback(
      c, +[](EZIO_EVT_ARGS, uint32_t receiver, OTF2_CommRef comm, uint32_t tag, uint64_t length) {
        Event& e = push(u, loc, t, attrs, EventKind::MpiSend);
        e.f1 = receiver;
        e.ref = comm;
        e.f2 = tag;
        e.a = length;
        return kOk;
      });
  OTF2_EvtReaderCallbacks_SetMpiIsendCallback(
      c, +[](EZIO_EVT_ARGS, uint32_t receiver, OTF2_CommRef comm, uint32_t tag, uint64_t length,
             uint64_t request) {
        Event& e = push(u, loc, t, attrs, EventKind::MpiIsend);
        e.f1 = receiver;
        e.ref = comm;
        e.f2 = tag;
        e.a = length;
        e.b = request;
        return kOk;
      });
  OTF2_EvtReaderCallbacks_SetMpiIsendCompleteCallback(
      c, +[](EZIO_EVT_ARGS, uint64_t request) {
        push(u, loc, t, attrs, EventKind::MpiIsendComplete).b = request;
        return kOk;
      });
  OTF2_EvtReaderCallbacks_SetMpiIrecvRequestCallback(
      c, +[](EZIO_EVT_ARGS, uint64_t request) {
        push(u, loc, t, attrs, EventKind::MpiIrecvRequest).b = request;
        return kOk;
      });
  OTF2_EvtReaderCallbacks_SetMpiRecvCallback(
      c, +[](EZIO_EVT_ARGS, uint32_t sender, OTF2_CommRef comm, uint32_t tag, uint64_t length) {
        Event& e = push(u, loc, t, attrs, EventKind::MpiRecv);
        e.f1 = sender;
        e.ref = comm;
        e.f2 = tag;
        e.a = length;
        return kOk;
      });
  OTF2_EvtReaderCallbacks_SetMpiIrecvCallback(
      c, +[](EZIO_EVT_ARGS, uint32_t sender, OTF2_CommRef comm, uint32_t tag, uint64_t length,
             uint64_t request) {
        Event& e = push(u, loc, t, attrs, EventKind::MpiIrecv);
        e.f1 = sender;
        e.ref = comm;
        e.f2 = tag;
        e.a = length;
        e.b = request;
        return kOk;
      });
  OTF2_EvtReaderCallbacks_SetMpiRequestTestCallback(
      c, +[](EZIO_EVT_ARGS, uint64_t request) {
        push(u, loc, t, attrs, EventKind::MpiRequestTest).b = request;
        return kOk;
      });
  OTF2_EvtReaderCallbacks_SetMpiRequestCancelledCallback(
      c, +[](EZIO_EVT_ARGS, uint64_t request) {
        push(u, loc, t, attrs, EventKind::MpiRequestCancelled).b = request;
        return kOk;
      });
  OTF2_EvtReaderCallbacks_SetMpiCollectiveBeginCallback(
      c, +[](EZIO_EVT_ARGS) {
        push(u, loc, t, attrs, EventKind::MpiCollectiveBegin);
        return kOk;
      });
  OTF2_EvtReaderCallbacks_SetMpiCollectiveEndCallback(
      c, +[](EZIO_EVT_ARGS, OTF2_CollectiveOp op, OTF2_CommRef comm, uint32_t root, uint64_t sent,
             uint64_t received) {
        Event& e = push(u, loc, t, attrs, EventKind::MpiCollectiveEnd);
        e.f1 = op;
        e.ref = comm;
        e.f2 = root;
        e.a = sent;
        e.b = received;
        return kOk;
      });
  OTF2_EvtReaderCallbacks_SetMetricCallback(
      c, +[](EZIO_EVT_ARGS, OTF2_MetricRef m, uint8_t n, const OTF2_Type* types,
             const OTF2_MetricValue* values) {
        Event& e = push(u, loc, t, attrs, EventKind::Metric);
        e.ref = m;
        e.metric_types.assign(types, types + n);
        e.metric_values.assign(values, values + n);
        return kOk;
      });
}

}  // namespace

Archive read_archive(const std::filesystem::path& anchor) {
  Archive archive;
  archive.anchor = anchor;
  ReaderPtr reader(OTF2_Reader_Open(anchor.c_str()));
  if (!reader) fail("cannot open the OTF2 archive {}", anchor.string());
  OTF2_Reader* r = reader.get();
  otf2::check(OTF2_Reader_SetSerialCollectiveCallbacks(r), "setting reader collectives");

  OTF2_GlobalDefReader* gdr = OTF2_Reader_GetGlobalDefReader(r);
  if (!gdr) fail("{}: no global definitions", anchor.string());
  DefCallbacksPtr dc(OTF2_GlobalDefReaderCallbacks_New());
  set_definition_callbacks(dc.get());
  otf2::check(OTF2_Reader_RegisterGlobalDefCallbacks(r, gdr, dc.get(), &archive),
              "registering definition callbacks");
  uint64_t read = 0;
  otf2::check(OTF2_Reader_ReadAllGlobalDefinitions(r, gdr, &read), "reading definitions");
  OTF2_Reader_CloseGlobalDefReader(r, gdr);

  if (archive.defs.locations.empty()) return archive;
  // Only locations with an event file: OTF2 prints errors for the others (writers may leave a
  // location without events, and so without a file).
  std::vector<OTF2_LocationRef> with_events;
  std::filesystem::path evt_dir = anchor.parent_path() / anchor.stem();
  for (const auto& [id, loc] : archive.defs.locations) {
    if (std::filesystem::exists(evt_dir / fmt::format("{}.evt", id))) with_events.push_back(id);
  }
  if (with_events.empty()) return archive;
  for (OTF2_LocationRef id : with_events) OTF2_Reader_SelectLocation(r, id);
  // Local definitions may carry mapping tables that OTF2 applies to the events it reads.
  bool def_files = OTF2_Reader_OpenDefFiles(r) == OTF2_SUCCESS;
  otf2::check(OTF2_Reader_OpenEvtFiles(r), "opening event files");
  EvtCallbacksPtr ec(OTF2_EvtReaderCallbacks_New());
  set_event_callbacks(ec.get());
  for (OTF2_LocationRef id : with_events) {
    if (def_files) {
      if (OTF2_DefReader* dr = OTF2_Reader_GetDefReader(r, id)) {
        uint64_t n = 0;
        OTF2_Reader_ReadAllLocalDefinitions(r, dr, &n);
        OTF2_Reader_CloseDefReader(r, dr);
      }
    }
    OTF2_EvtReader* er = OTF2_Reader_GetEvtReader(r, id);
    if (!er) continue;  // a location without an event file: no events
    otf2::check(OTF2_Reader_RegisterEvtCallbacks(r, er, ec.get(), &archive),
                "registering event callbacks");
    uint64_t n = 0;
    otf2::check(OTF2_Reader_ReadAllLocalEvents(r, er, &n), "reading events");
    // Records of kinds without a callback are skipped by OTF2; count them from the position.
    uint64_t pos = 0;
    OTF2_EvtReader_GetPos(er, &pos);
    size_t kept = archive.events[id].size();
    if (pos > kept) archive.unsupported_events += pos - kept;
    OTF2_Reader_CloseEvtReader(r, er);
  }
  otf2::check(OTF2_Reader_CloseEvtFiles(r), "closing event files");
  if (def_files) OTF2_Reader_CloseDefFiles(r);
  return archive;
}

}  // namespace ezio::converters
