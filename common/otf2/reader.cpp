#include "common/otf2/reader.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <exception>
#include <string_view>
#include <vector>

#include "common/error.h"

namespace ezio::otf2 {
namespace {

// OTF2 prints its own errors to stderr; keep the last one so that our message can say what went
// wrong, and print nothing else.
thread_local std::string last_otf2_message;

OTF2_ErrorCode remember_error(void*, const char*, uint64_t, const char*, OTF2_ErrorCode code,
                              const char* format, va_list va) {
  char buf[512];
  std::vsnprintf(buf, sizeof buf, format, va);
  last_otf2_message = buf;
  return code;
}

struct QuietErrors {
  QuietErrors() : previous(OTF2_Error_RegisterCallback(remember_error, nullptr)) {
    last_otf2_message.clear();
  }
  ~QuietErrors() { OTF2_Error_RegisterCallback(previous, nullptr); }
  OTF2_ErrorCallback previous;
};

[[noreturn]] void fail_otf2(const std::filesystem::path& anchor, std::string_view what,
                            OTF2_ErrorCode code) {
  std::string detail =
      last_otf2_message.empty() ? OTF2_Error_GetDescription(code) : last_otf2_message;
  fail("{}: not a readable OTF2 archive: {} failed ({})", anchor.string(), what, detail);
}

void check_read(OTF2_ErrorCode code, const std::filesystem::path& anchor, std::string_view what) {
  if (code != OTF2_SUCCESS) fail_otf2(anchor, what, code);
}

// Definitions refer to strings that may come later in the file: keep refs, resolve at the end.
struct PendingProperty {
  uint64_t owner;
  Ref name;
  OTF2_Type type;
  OTF2_AttributeValue value;
};
struct PendingDefs {
  Definitions* defs = nullptr;
  std::map<Ref, std::array<Ref, 2>> region_names;
  std::map<Ref, Ref> group_names, file_names, handle_names, attribute_names, member_names;
  std::map<OTF2_LocationRef, Ref> location_names;
  std::vector<PendingProperty> node_props, group_props, location_props;
};

PendingDefs& pending(void* p) { return *static_cast<PendingDefs*>(p); }

OTF2_CallbackCode on_clock(void* p, uint64_t resolution, uint64_t offset, uint64_t length,
                           uint64_t) {
  auto& d = *pending(p).defs;
  d.resolution = resolution == 0 ? 1 : resolution;  // a zero resolution would divide by zero
  d.global_offset = offset;
  d.trace_length = length;
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_string(void* p, OTF2_StringRef self, const char* s) {
  pending(p).defs->strings.try_emplace(self, s ? s : "");
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_attribute(void* p, OTF2_AttributeRef self, OTF2_StringRef name, OTF2_StringRef,
                               OTF2_Type) {
  pending(p).attribute_names.try_emplace(self, name);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_group(void* p, OTF2_LocationGroupRef self, OTF2_StringRef name,
                           OTF2_LocationGroupType type, OTF2_SystemTreeNodeRef,
                           OTF2_LocationGroupRef) {
  pending(p).defs->location_groups[self].type = type;
  pending(p).group_names.try_emplace(self, name);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_location(void* p, OTF2_LocationRef self, OTF2_StringRef name,
                              OTF2_LocationType type, uint64_t events,
                              OTF2_LocationGroupRef group) {
  auto [it, fresh] = pending(p).defs->locations.try_emplace(self);
  if (fresh) {
    it->second.type = type;
    it->second.declared_events = events;
    it->second.group = group;
    pending(p).location_names[self] = name;
  }
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_region(void* p, OTF2_RegionRef self, OTF2_StringRef name,
                            OTF2_StringRef canonical, OTF2_StringRef, OTF2_RegionRole role,
                            OTF2_Paradigm paradigm, OTF2_RegionFlag, OTF2_StringRef, uint32_t,
                            uint32_t) {
  auto [it, fresh] = pending(p).defs->regions.try_emplace(self);
  if (fresh) {
    it->second.role = role;
    it->second.paradigm = paradigm;
    pending(p).region_names[self] = {name, canonical};
  }
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_file(void* p, OTF2_IoFileRef self, OTF2_StringRef name,
                          OTF2_SystemTreeNodeRef) {
  pending(p).file_names.try_emplace(self, name);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_handle(void* p, OTF2_IoHandleRef self, OTF2_StringRef name,
                            OTF2_IoFileRef file, OTF2_IoParadigmRef, OTF2_IoHandleFlag,
                            OTF2_CommRef, OTF2_IoHandleRef) {
  auto [it, fresh] = pending(p).defs->io_handles.try_emplace(self);
  if (fresh) {
    it->second.file = file;
    pending(p).handle_names[self] = name;
  }
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_metric_member(void* p, OTF2_MetricMemberRef self, OTF2_StringRef name,
                                   OTF2_StringRef, OTF2_MetricType, OTF2_MetricMode, OTF2_Type,
                                   OTF2_Base, int64_t, OTF2_StringRef) {
  pending(p).member_names.try_emplace(self, name);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_metric_class(void* p, OTF2_MetricRef self, uint8_t n,
                                  const OTF2_MetricMemberRef* members, OTF2_MetricOccurrence,
                                  OTF2_RecorderKind) {
  auto [it, fresh] = pending(p).defs->metric_classes.try_emplace(self);
  if (fresh && members) it->second.assign(members, members + n);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_node_property(void* p, OTF2_SystemTreeNodeRef node, OTF2_StringRef name,
                                   OTF2_Type type, OTF2_AttributeValue value) {
  pending(p).node_props.push_back({node, name, type, value});
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_group_property(void* p, OTF2_LocationGroupRef group, OTF2_StringRef name,
                                    OTF2_Type type, OTF2_AttributeValue value) {
  pending(p).group_props.push_back({group, name, type, value});
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_location_property(void* p, OTF2_LocationRef loc, OTF2_StringRef name,
                                       OTF2_Type type, OTF2_AttributeValue value) {
  pending(p).location_props.push_back({loc, name, type, value});
  return OTF2_CALLBACK_SUCCESS;
}

bool is_integer(OTF2_Type t) {
  switch (t) {
    case OTF2_TYPE_UINT8:
    case OTF2_TYPE_UINT16:
    case OTF2_TYPE_UINT32:
    case OTF2_TYPE_UINT64:
    case OTF2_TYPE_INT8:
    case OTF2_TYPE_INT16:
    case OTF2_TYPE_INT32:
    case OTF2_TYPE_INT64:
      return true;
    default:
      return false;
  }
}

int64_t as_int(OTF2_Type t, const OTF2_AttributeValue& v) {
  switch (t) {
    case OTF2_TYPE_UINT8:
      return v.uint8;
    case OTF2_TYPE_UINT16:
      return v.uint16;
    case OTF2_TYPE_UINT32:
      return v.uint32;
    case OTF2_TYPE_UINT64:
      return static_cast<int64_t>(v.uint64);
    case OTF2_TYPE_INT8:
      return v.int8;
    case OTF2_TYPE_INT16:
      return v.int16;
    case OTF2_TYPE_INT32:
      return v.int32;
    case OTF2_TYPE_INT64:
      return v.int64;
    default:
      return 0;
  }
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// --- events -----------------------------------------------------------------------------------

enum class AttrKind : uint8_t { kOther, kBytes, kResult, kOffset, kPoint };

struct EventContext {
  EventSink* sink;
  const std::unordered_map<Ref, AttrKind>* attr_kinds;
  std::exception_ptr error;
};

EventContext& ctx(void* p) { return *static_cast<EventContext*>(p); }

CallAttributes decode(const EventContext& c, OTF2_AttributeList* list) {
  CallAttributes a;
  if (!list) return a;
  uint32_t n = OTF2_AttributeList_GetNumberOfElements(list);
  for (uint32_t i = 0; i < n; ++i) {
    OTF2_AttributeRef ref;
    OTF2_Type type;
    OTF2_AttributeValue value;
    if (OTF2_AttributeList_GetAttributeByIndex(list, i, &ref, &type, &value) != OTF2_SUCCESS) {
      continue;
    }
    auto it = c.attr_kinds->find(ref);
    if (it == c.attr_kinds->end() || !is_integer(type)) continue;
    int64_t v = as_int(type, value);
    switch (it->second) {
      case AttrKind::kBytes:
        a.has_bytes = true;
        a.bytes = static_cast<uint64_t>(v);
        break;
      case AttrKind::kResult:
        a.has_result = true;
        a.result = v;
        break;
      case AttrKind::kOffset:
        a.has_offset = true;
        a.offset = v;
        break;
      case AttrKind::kPoint:
        a.point = v != 0;
        break;
      case AttrKind::kOther:
        break;
    }
  }
  return a;
}

// A C callback must not let a C++ exception unwind through OTF2: park it and interrupt reading.
template <typename F>
OTF2_CallbackCode guarded(void* p, F&& f) {
  try {
    f(ctx(p));
    return OTF2_CALLBACK_SUCCESS;
  } catch (...) {
    ctx(p).error = std::current_exception();
    return OTF2_CALLBACK_INTERRUPT;
  }
}

OTF2_CallbackCode ev_enter(OTF2_LocationRef loc, OTF2_TimeStamp t, uint64_t, void* p,
                           OTF2_AttributeList* attrs, OTF2_RegionRef region) {
  return guarded(p, [&](EventContext& c) { c.sink->enter(loc, t, region, decode(c, attrs)); });
}
OTF2_CallbackCode ev_leave(OTF2_LocationRef loc, OTF2_TimeStamp t, uint64_t, void* p,
                           OTF2_AttributeList* attrs, OTF2_RegionRef region) {
  return guarded(p, [&](EventContext& c) { c.sink->leave(loc, t, region, decode(c, attrs)); });
}
OTF2_CallbackCode ev_io_begin(OTF2_LocationRef loc, OTF2_TimeStamp t, uint64_t, void* p,
                              OTF2_AttributeList* attrs, OTF2_IoHandleRef h,
                              OTF2_IoOperationMode mode, OTF2_IoOperationFlag, uint64_t bytes,
                              uint64_t matching) {
  return guarded(p, [&](EventContext& c) {
    c.sink->io_begin(loc, t, h, mode, bytes, matching, decode(c, attrs));
  });
}
OTF2_CallbackCode ev_io_complete(OTF2_LocationRef loc, OTF2_TimeStamp t, uint64_t, void* p,
                                 OTF2_AttributeList*, OTF2_IoHandleRef h, uint64_t bytes,
                                 uint64_t matching) {
  return guarded(p, [&](EventContext& c) { c.sink->io_complete(loc, t, h, bytes, matching); });
}
OTF2_CallbackCode ev_io_cancelled(OTF2_LocationRef loc, OTF2_TimeStamp t, uint64_t, void* p,
                                  OTF2_AttributeList*, OTF2_IoHandleRef h, uint64_t matching) {
  return guarded(p, [&](EventContext& c) { c.sink->io_cancelled(loc, t, h, matching); });
}
OTF2_CallbackCode ev_metric(OTF2_LocationRef loc, OTF2_TimeStamp t, uint64_t, void* p,
                            OTF2_AttributeList*, OTF2_MetricRef metric, uint8_t n,
                            const OTF2_Type* types, const OTF2_MetricValue* values) {
  return guarded(p, [&](EventContext& c) {
    std::vector<uint64_t> v(n);
    for (uint8_t i = 0; i < n && types && values; ++i) {
      v[i] = types[i] == OTF2_TYPE_DOUBLE
                 ? static_cast<uint64_t>(std::max(0.0, values[i].floating_point))
             : types[i] == OTF2_TYPE_INT64
                 ? static_cast<uint64_t>(std::max<int64_t>(0, values[i].signed_int))
                 : values[i].unsigned_int;
    }
    c.sink->metric(loc, t, metric, v);
  });
}
OTF2_CallbackCode ev_io_seek(OTF2_LocationRef loc, OTF2_TimeStamp t, uint64_t, void* p,
                             OTF2_AttributeList*, OTF2_IoHandleRef h, int64_t, OTF2_IoSeekOption,
                             uint64_t result) {
  return guarded(p, [&](EventContext& c) { c.sink->io_seek(loc, t, h, result); });
}
OTF2_CallbackCode ev_io_create(OTF2_LocationRef loc, OTF2_TimeStamp t, uint64_t, void* p,
                               OTF2_AttributeList*, OTF2_IoHandleRef h, OTF2_IoAccessMode,
                               OTF2_IoCreationFlag, OTF2_IoStatusFlag) {
  return guarded(p, [&](EventContext& c) { c.sink->io_create_handle(loc, t, h); });
}
OTF2_CallbackCode ev_io_destroy(OTF2_LocationRef loc, OTF2_TimeStamp t, uint64_t, void* p,
                                OTF2_AttributeList*, OTF2_IoHandleRef h) {
  return guarded(p, [&](EventContext& c) { c.sink->io_destroy_handle(loc, t, h); });
}

struct EvtCallbacksDeleter {
  void operator()(OTF2_EvtReaderCallbacks* c) const { OTF2_EvtReaderCallbacks_Delete(c); }
};
struct DefCallbacksDeleter {
  void operator()(OTF2_GlobalDefReaderCallbacks* c) const {
    OTF2_GlobalDefReaderCallbacks_Delete(c);
  }
};

// Closes an event (or definition) file set opened on the reader, also when reading throws.
class OpenFiles {
 public:
  OpenFiles(OTF2_Reader* r, OTF2_ErrorCode (*close)(OTF2_Reader*)) : r_(r), close_(close) {}
  ~OpenFiles() {
    if (r_) close_(r_);
  }
  OpenFiles(const OpenFiles&) = delete;
  OpenFiles& operator=(const OpenFiles&) = delete;

 private:
  OTF2_Reader* r_;
  OTF2_ErrorCode (*close_)(OTF2_Reader*);
};

constexpr uint64_t kBatch = 1 << 20;

// OTF2's anchor-file parser can loop (practically) forever on some corrupted anchors, and a C loop
// cannot be interrupted in-process. The anchor is tiny, so parse it first in a child with a time
// limit: a hang or crash there becomes a clean error here.
bool anchor_parses(const std::filesystem::path& anchor) {
  pid_t pid = fork();
  if (pid < 0) return true;  // cannot probe: let the real open decide
  if (pid == 0) {
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0) dup2(null, STDERR_FILENO);
    alarm(10);
    OTF2_Reader* r = OTF2_Reader_Open(anchor.c_str());
    _exit(r ? 0 : 1);  // skip OTF2_Reader_Close: nothing to flush for a reader
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  int status = 0;
  for (;;) {
    pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0) return true;
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return false;
    }
    usleep(1000);
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace

void ReaderDeleter::operator()(OTF2_Reader* r) const {
  QuietErrors quiet;
  OTF2_Reader_Close(r);
}

const std::string& Definitions::string(Ref id) const {
  static const std::string empty;
  auto it = strings.find(id);
  return it == strings.end() ? empty : it->second;
}

const RegionDef* Definitions::region(Ref id) const {
  auto it = regions.find(id);
  return it == regions.end() ? nullptr : &it->second;
}

const LocationDef* Definitions::location(OTF2_LocationRef id) const {
  auto it = locations.find(id);
  return it == locations.end() ? nullptr : &it->second;
}

std::string Definitions::handle_path(Ref handle) const {
  auto h = io_handles.find(handle);
  if (h == io_handles.end()) return fmt::format("<handle {}>", handle);
  if (auto f = io_files.find(h->second.file); f != io_files.end() && !f->second.empty()) {
    return f->second;
  }
  std::string_view name = h->second.name;
  if (auto pos = name.rfind(" [pid "); pos != std::string_view::npos && ends_with(name, "]")) {
    name = name.substr(0, pos);
  }
  if (name.empty()) return fmt::format("<handle {}>", handle);
  return std::string(name);
}

std::string Definitions::process_of(OTF2_LocationRef loc) const {
  auto l = locations.find(loc);
  if (l == locations.end()) return {};
  auto g = location_groups.find(l->second.group);
  return g == location_groups.end() ? std::string() : g->second.name;
}

std::filesystem::path find_anchor(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  auto st = fs::status(path, ec);
  if (ec || !fs::exists(st)) fail("{}: no such file or directory", path.string());
  if (fs::is_directory(st)) {
    std::vector<fs::path> anchors;
    for (auto& entry : fs::directory_iterator(path, ec)) {
      if (entry.path().extension() == ".otf2" && entry.is_regular_file()) {
        anchors.push_back(entry.path());
      }
    }
    if (ec) fail("{}: cannot list directory: {}", path.string(), ec.message());
    if (anchors.empty()) {
      fail("{}: not an OTF2 archive (no .otf2 anchor file in this directory)", path.string());
    }
    if (anchors.size() > 1) {
      fail("{}: holds {} .otf2 anchor files; name the one to read", path.string(), anchors.size());
    }
    return anchors.front();
  }
  if (!fs::is_regular_file(st)) fail("{}: not a regular file", path.string());
  if (fs::file_size(path, ec) == 0) fail("{}: empty file, not an OTF2 archive", path.string());
  return path;
}

ArchiveReader::ArchiveReader(const std::filesystem::path& path) : anchor_(find_anchor(path)) {
  if (!anchor_parses(anchor_)) {
    fail("{}: not a readable OTF2 archive (corrupted anchor file)", anchor_.string());
  }
  QuietErrors quiet;
  reader_.reset(OTF2_Reader_Open(anchor_.c_str()));
  if (!reader_) {
    fail("{}: not a readable OTF2 archive{}", anchor_.string(),
         last_otf2_message.empty() ? "" : fmt::format(" ({})", last_otf2_message));
  }
  check_read(OTF2_Reader_SetSerialCollectiveCallbacks(reader_.get()), anchor_,
             "setting up the reader");
  read_definitions();
}

ArchiveReader::~ArchiveReader() = default;

void ArchiveReader::read_definitions() {
  OTF2_Reader* r = reader_.get();
  OTF2_GlobalDefReader* gdr = OTF2_Reader_GetGlobalDefReader(r);
  if (!gdr) fail_otf2(anchor_, "opening the global definitions", OTF2_ERROR_FILE_CAN_NOT_OPEN);

  PendingDefs p;
  p.defs = &defs_;
  std::unique_ptr<OTF2_GlobalDefReaderCallbacks, DefCallbacksDeleter> cb(
      OTF2_GlobalDefReaderCallbacks_New());
  OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(cb.get(), on_clock);
  OTF2_GlobalDefReaderCallbacks_SetStringCallback(cb.get(), on_string);
  OTF2_GlobalDefReaderCallbacks_SetAttributeCallback(cb.get(), on_attribute);
  OTF2_GlobalDefReaderCallbacks_SetLocationGroupCallback(cb.get(), on_group);
  OTF2_GlobalDefReaderCallbacks_SetLocationCallback(cb.get(), on_location);
  OTF2_GlobalDefReaderCallbacks_SetRegionCallback(cb.get(), on_region);
  OTF2_GlobalDefReaderCallbacks_SetIoRegularFileCallback(cb.get(), on_file);
  OTF2_GlobalDefReaderCallbacks_SetIoHandleCallback(cb.get(), on_handle);
  OTF2_GlobalDefReaderCallbacks_SetSystemTreeNodePropertyCallback(cb.get(), on_node_property);
  OTF2_GlobalDefReaderCallbacks_SetMetricMemberCallback(cb.get(), on_metric_member);
  OTF2_GlobalDefReaderCallbacks_SetMetricClassCallback(cb.get(), on_metric_class);
  OTF2_GlobalDefReaderCallbacks_SetLocationGroupPropertyCallback(cb.get(), on_group_property);
  OTF2_GlobalDefReaderCallbacks_SetLocationPropertyCallback(cb.get(), on_location_property);
  check_read(OTF2_Reader_RegisterGlobalDefCallbacks(r, gdr, cb.get(), &p), anchor_,
             "registering definition callbacks");
  uint64_t n = 0;
  OTF2_ErrorCode code = OTF2_Reader_ReadAllGlobalDefinitions(r, gdr, &n);
  OTF2_Reader_CloseGlobalDefReader(r, gdr);
  if (code != OTF2_SUCCESS) fail_otf2(anchor_, "reading the global definitions", code);

  for (auto& [id, names] : p.region_names) {
    auto& reg = defs_.regions[id];
    reg.name = defs_.string(names[0]);
    reg.canonical = defs_.string(names[1]);
    if (reg.canonical.empty()) reg.canonical = reg.name;
    if (reg.name.empty()) reg.name = reg.canonical;
    if (reg.name.empty()) reg.name = reg.canonical = fmt::format("<region {}>", id);
  }
  for (auto& [id, name] : p.group_names) defs_.location_groups[id].name = defs_.string(name);
  for (auto& [id, name] : p.location_names) defs_.locations[id].name = defs_.string(name);
  for (auto& [id, name] : p.file_names) defs_.io_files[id] = defs_.string(name);
  for (auto& [id, name] : p.handle_names) defs_.io_handles[id].name = defs_.string(name);
  for (auto& [id, name] : p.attribute_names) defs_.attributes[id] = defs_.string(name);
  for (auto& [id, name] : p.member_names) defs_.metric_members[id] = defs_.string(name);
  for (auto& prop : p.node_props) {
    const std::string& name = defs_.string(prop.name);
    if (prop.type == OTF2_TYPE_STRING) {
      defs_.node_string_properties[name] = defs_.string(prop.value.stringRef);
    } else if (is_integer(prop.type)) {
      defs_.node_uint_properties[name] = static_cast<uint64_t>(as_int(prop.type, prop.value));
    }
  }
  for (auto& prop : p.group_props) {
    if (defs_.string(prop.name) == "EZIOTRACE::PID" && is_integer(prop.type)) {
      defs_.group_pids[static_cast<Ref>(prop.owner)] =
          static_cast<uint64_t>(as_int(prop.type, prop.value));
    }
  }
  for (auto& prop : p.location_props) {
    if (defs_.string(prop.name) == "EZIOTRACE::TID" && is_integer(prop.type)) {
      defs_.location_tids[prop.owner] = static_cast<uint64_t>(as_int(prop.type, prop.value));
    }
  }
}

void ArchiveReader::read_events(EventSink& sink,
                                const std::function<void(const ReadProgress&)>& progress,
                                const std::function<bool(OTF2_LocationRef)>& select) {
  QuietErrors quiet;
  OTF2_Reader* r = reader_.get();

  std::unordered_map<Ref, AttrKind> kinds;
  for (auto& [id, name] : defs_.attributes) {
    AttrKind k = ends_with(name, ".bytes")    ? AttrKind::kBytes
                 : ends_with(name, ".result") ? AttrKind::kResult
                 : ends_with(name, ".offset") ? AttrKind::kOffset
                 : ends_with(name, ".point")  ? AttrKind::kPoint
                                              : AttrKind::kOther;
    if (k != AttrKind::kOther) kinds[id] = k;
  }
  EventContext c{&sink, &kinds, nullptr};

  std::unique_ptr<OTF2_EvtReaderCallbacks, EvtCallbacksDeleter> cb(OTF2_EvtReaderCallbacks_New());
  OTF2_EvtReaderCallbacks_SetEnterCallback(cb.get(), ev_enter);
  OTF2_EvtReaderCallbacks_SetLeaveCallback(cb.get(), ev_leave);
  OTF2_EvtReaderCallbacks_SetIoOperationBeginCallback(cb.get(), ev_io_begin);
  OTF2_EvtReaderCallbacks_SetIoOperationCompleteCallback(cb.get(), ev_io_complete);
  OTF2_EvtReaderCallbacks_SetIoOperationCancelledCallback(cb.get(), ev_io_cancelled);
  OTF2_EvtReaderCallbacks_SetIoSeekCallback(cb.get(), ev_io_seek);
  OTF2_EvtReaderCallbacks_SetMetricCallback(cb.get(), ev_metric);
  OTF2_EvtReaderCallbacks_SetIoCreateHandleCallback(cb.get(), ev_io_create);
  OTF2_EvtReaderCallbacks_SetIoDestroyHandleCallback(cb.get(), ev_io_destroy);

  ReadProgress prog;
  prog.locations = defs_.locations.size();
  for (auto& [id, loc] : defs_.locations) prog.declared_events += loc.declared_events;
  if (defs_.locations.empty()) return;

  // Local definition files are optional (mapping tables, clock offsets); events are not.
  for (auto& [id, loc] : defs_.locations) {
    check_read(OTF2_Reader_SelectLocation(r, id), anchor_, "selecting a location");
  }
  bool def_files = OTF2_Reader_OpenDefFiles(r) == OTF2_SUCCESS;
  std::unique_ptr<OpenFiles> def_guard;
  if (def_files) def_guard = std::make_unique<OpenFiles>(r, OTF2_Reader_CloseDefFiles);
  check_read(OTF2_Reader_OpenEvtFiles(r), anchor_, "opening the event files");
  OpenFiles evt_guard(r, OTF2_Reader_CloseEvtFiles);

  for (auto& [id, loc] : defs_.locations) {
    if (select && !select(id)) {
      ++prog.locations_done;
      continue;
    }
    if (def_files) {
      if (OTF2_DefReader* dr = OTF2_Reader_GetDefReader(r, id)) {
        uint64_t n = 0;
        OTF2_ErrorCode code = OTF2_Reader_ReadAllLocalDefinitions(r, dr, &n);
        OTF2_Reader_CloseDefReader(r, dr);
        if (code != OTF2_SUCCESS) {
          fail_otf2(anchor_, fmt::format("reading the definitions of location {}", id), code);
        }
      }
    }
    OTF2_EvtReader* er = OTF2_Reader_GetEvtReader(r, id);
    // A writer creates no event file for a location without events.
    if (!er && loc.declared_events == 0) {
      sink.begin_location(id);
      sink.end_location(id);
      ++prog.locations_done;
      continue;
    }
    if (!er) {
      fail_otf2(anchor_, fmt::format("opening the events of location {}", id),
                OTF2_ERROR_FILE_CAN_NOT_OPEN);
    }
    std::unique_ptr<OTF2_EvtReader, std::function<void(OTF2_EvtReader*)>> er_guard(
        er, [r](OTF2_EvtReader* e) { OTF2_Reader_CloseEvtReader(r, e); });
    check_read(OTF2_Reader_RegisterEvtCallbacks(r, er, cb.get(), &c), anchor_,
               "registering event callbacks");
    sink.begin_location(id);
    for (;;) {
      uint64_t got = 0;
      OTF2_ErrorCode code = OTF2_Reader_ReadLocalEvents(r, er, kBatch, &got);
      prog.events += got;
      if (c.error) std::rethrow_exception(c.error);
      if (code != OTF2_SUCCESS) {
        fail_otf2(anchor_, fmt::format("reading the events of location {} ({})", id, loc.name),
                  code);
      }
      if (progress) progress(prog);
      if (got < kBatch) break;
    }
    sink.end_location(id);
    ++prog.locations_done;
    if (progress) progress(prog);
  }
}

}  // namespace ezio::otf2
