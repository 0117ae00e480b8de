// SPDX-License-Identifier: GPL-2.0-only
#include "common/otf2/writer.h"

#include <cstdlib>

#include "common/error.h"
#include "common/otf2/anchor.h"
#include "common/otf2/check.h"
#include "common/otf2/chunk_memory.h"

namespace ezio::otf2 {
namespace {

OTF2_FlushType pre_flush(void*, OTF2_FileType, OTF2_LocationRef, void*, bool) { return OTF2_FLUSH; }
// No post_flush callback: events are written after sorting, so a BufferFlush record stamped with
// the writing time would break the per-location time order.
OTF2_FlushCallbacks flush_callbacks = {pre_flush, nullptr};

// OTF2 keeps up to 128 MiB of chunks per writer before it writes any: a recording written while
// the application runs would hold its whole trace in memory and write it at the end. A writer
// that asks for more than kChunksPerWriter chunks gets none, which makes OTF2 write its chunks
// out and free them (OTF2_Buffer_RequestNewChunk), then ask again.
constexpr size_t kChunkBytes = ArchiveWriter::kEventChunkBytes;
constexpr size_t kChunksPerWriter = 4;

struct WriterChunks {
  std::vector<void*> chunks;
};

void* allocate_chunk(void*, OTF2_FileType, OTF2_LocationRef, void** per_buffer, uint64_t size) {
  auto*& mine = reinterpret_cast<WriterChunks*&>(*per_buffer);
  if (!mine) mine = new WriterChunks;
  if (mine->chunks.size() >= kChunksPerWriter) return nullptr;
  void* chunk = std::malloc(size);
  if (chunk) mine->chunks.push_back(chunk);
  return chunk;
}

void free_chunks(void*, OTF2_FileType, OTF2_LocationRef, void** per_buffer, bool final) {
  auto*& mine = reinterpret_cast<WriterChunks*&>(*per_buffer);
  if (!mine) return;
  for (void* c : mine->chunks) std::free(c);
  mine->chunks.clear();
  if (final) {
    delete mine;
    mine = nullptr;
  }
}

OTF2_MemoryCallbacks memory_callbacks = {allocate_chunk, free_chunks};

}  // namespace

void ArchiveDeleter::operator()(OTF2_Archive* a) const { OTF2_Archive_Close(a); }

ArchiveWriter::ArchiveWriter(const std::filesystem::path& dir, std::string name)
    : anchor_(dir / (name + ".otf2")) {
  prepare_chunk_memory();  // OTF2 zeroes the rest of every chunk it flushes
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) fail("cannot create {}: {}", dir.string(), ec.message());
  if (std::filesystem::exists(anchor_)) fail("{} already exists", anchor_.string());
  archive_.reset(OTF2_Archive_Open(dir.c_str(), name.c_str(), OTF2_FILEMODE_WRITE, kChunkBytes,
                                   4 * kChunkBytes, OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE));
  if (!archive_) fail("OTF2: cannot create archive {}", anchor_.string());
  check(OTF2_Archive_SetFlushCallbacks(archive_.get(), &flush_callbacks, nullptr),
        "setting flush callbacks");
  check(OTF2_Archive_SetMemoryCallbacks(archive_.get(), &memory_callbacks, nullptr),
        "setting memory callbacks");
  check(OTF2_Archive_SetSerialCollectiveCallbacks(archive_.get()), "setting collectives");
  check(OTF2_Archive_SetCreator(archive_.get(), "eziotrace"), "setting creator");
  check(OTF2_Archive_OpenEvtFiles(archive_.get()), "opening event files");
  attributes_.reset(OTF2_AttributeList_New());
}

ArchiveWriter::~ArchiveWriter() {
  // An archive abandoned before close() finished (the recording failed, or a write did: a full
  // disk) is not closed: OTF2 would flush again through the file it already gave up on, and crash.
  // The handle is left to the process's exit; the caller removes the incomplete directory.
  (void)archive_.release();
}

Ref ArchiveWriter::string(std::string_view s) {
  if (auto it = string_ids_.find(s); it != string_ids_.end()) return it->second;
  Ref id = static_cast<Ref>(strings_.size());
  strings_.emplace_back(s);
  string_ids_.emplace(std::string(s), id);
  return id;
}

Ref ArchiveWriter::region(std::string_view name, std::string_view canonical_name,
                          std::string_view description, OTF2_RegionRole role,
                          OTF2_Paradigm paradigm) {
  if (auto it = region_ids_.find(canonical_name); it != region_ids_.end()) return it->second;
  Ref id = static_cast<Ref>(regions_.size());
  regions_.push_back({string(name), string(canonical_name), string(description), role, paradigm});
  region_ids_.emplace(std::string(canonical_name), id);
  return id;
}

Ref ArchiveWriter::distinct_region(std::string_view name, std::string_view canonical_name,
                                   std::string_view description, OTF2_RegionRole role) {
  regions_.push_back(
      {string(name), string(canonical_name), string(description), role, OTF2_PARADIGM_NONE});
  return static_cast<Ref>(regions_.size() - 1);
}

Ref ArchiveWriter::attribute(std::string_view name, std::string_view description, OTF2_Type type) {
  if (auto it = attribute_ids_.find(name); it != attribute_ids_.end()) return it->second;
  Ref id = static_cast<Ref>(attribute_defs_.size());
  attribute_defs_.push_back({string(name), string(description), type});
  attribute_ids_.emplace(std::string(name), id);
  return id;
}

Ref ArchiveWriter::system_tree_node(std::string_view name, std::string_view class_name,
                                    Ref parent) {
  nodes_.push_back({string(name), string(class_name), parent});
  return static_cast<Ref>(nodes_.size() - 1);
}

Ref ArchiveWriter::location_group(std::string_view name, OTF2_LocationGroupType type, Ref node) {
  location_groups_.push_back({string(name), type, node});
  return static_cast<Ref>(location_groups_.size() - 1);
}

void ArchiveWriter::location(OTF2_LocationRef id, std::string_view name, OTF2_LocationType type,
                             Ref group) {
  Location& loc = locations_[id];
  if (loc.defined) fail("OTF2: location {} defined twice", id);
  loc.defined = true;
  loc.name = string(name);
  loc.type = type;
  loc.group = group;
}

Ref ArchiveWriter::io_paradigm(std::string_view identification, std::string_view name,
                               OTF2_IoParadigmClass cls, OTF2_IoParadigmFlag flags) {
  // One definition per identification: several layers (files, block devices) share "linux".
  for (size_t i = 0; i < io_paradigms_.size(); ++i) {
    if (strings_[io_paradigms_[i].identification] == identification) return static_cast<Ref>(i);
  }
  io_paradigms_.push_back({string(identification), string(name), cls, flags});
  return static_cast<Ref>(io_paradigms_.size() - 1);
}

Ref ArchiveWriter::io_file(std::string_view path, Ref scope_node) {
  auto key = std::make_pair(std::string(path), scope_node);
  if (auto it = io_file_ids_.find(key); it != io_file_ids_.end()) return it->second;
  Ref id = static_cast<Ref>(io_files_.size());
  io_files_.push_back({string(path), scope_node});
  io_file_ids_.emplace(std::move(key), id);
  return id;
}

Ref ArchiveWriter::distinct_io_file(std::string_view path, Ref scope_node) {
  Ref id = static_cast<Ref>(io_files_.size());
  io_files_.push_back({string(path), scope_node});
  return id;
}

void ArchiveWriter::io_file_property(Ref file, std::string_view name, std::string_view value) {
  OTF2_AttributeValue v;
  v.stringRef = string(value);
  io_file_properties_.push_back({file, string(name), OTF2_TYPE_STRING, v});
}

Ref ArchiveWriter::io_handle(std::string_view name, Ref file, Ref paradigm, OTF2_IoHandleFlag flags,
                             Ref parent, Ref comm) {
  io_handles_.push_back({string(name), file, paradigm, flags, parent, comm});
  return static_cast<Ref>(io_handles_.size() - 1);
}

Ref ArchiveWriter::group(std::string_view name, OTF2_GroupType type, OTF2_Paradigm paradigm,
                         OTF2_GroupFlag flags, std::vector<uint64_t> members) {
  groups_.push_back({string(name), type, paradigm, flags, std::move(members)});
  return static_cast<Ref>(groups_.size() - 1);
}

Ref ArchiveWriter::comm(std::string_view name, Ref group, Ref parent) {
  comms_.push_back({string(name), group, parent});
  return static_cast<Ref>(comms_.size() - 1);
}

Ref ArchiveWriter::metric_member(std::string_view name, std::string_view description,
                                 OTF2_MetricType type, OTF2_MetricMode mode, OTF2_Type value_type,
                                 std::string_view unit) {
  metric_members_.push_back(
      {string(name), string(description), type, mode, value_type, string(unit)});
  return static_cast<Ref>(metric_members_.size() - 1);
}

Ref ArchiveWriter::metric_class(std::vector<Ref> members, OTF2_MetricOccurrence occurrence,
                                OTF2_RecorderKind kind) {
  metric_classes_.push_back({std::move(members), occurrence, kind});
  return static_cast<Ref>(metric_classes_.size() - 1);
}

Ref ArchiveWriter::paradigm(OTF2_Paradigm paradigm, std::string_view name, OTF2_ParadigmClass cls) {
  paradigms_.push_back({paradigm, string(name), cls});
  return static_cast<Ref>(paradigms_.size() - 1);
}

void ArchiveWriter::system_tree_node_property(Ref node, std::string_view name, OTF2_Type type,
                                              OTF2_AttributeValue value) {
  node_properties_.push_back({node, string(name), type, value});
}

void ArchiveWriter::system_tree_node_property(Ref node, std::string_view name, uint64_t value) {
  OTF2_AttributeValue v;
  v.uint64 = value;
  system_tree_node_property(node, name, OTF2_TYPE_UINT64, v);
}

void ArchiveWriter::system_tree_node_property(Ref node, std::string_view name,
                                              std::string_view value) {
  OTF2_AttributeValue v;
  v.stringRef = string(value);
  system_tree_node_property(node, name, OTF2_TYPE_STRING, v);
}

void ArchiveWriter::location_group_property(Ref group, std::string_view name, uint64_t value) {
  OTF2_AttributeValue v;
  v.uint64 = value;
  group_properties_.push_back({group, string(name), OTF2_TYPE_UINT64, v});
}

void ArchiveWriter::location_group_property(Ref group, std::string_view name,
                                            std::string_view value) {
  OTF2_AttributeValue v;
  v.stringRef = string(value);
  group_properties_.push_back({group, string(name), OTF2_TYPE_STRING, v});
}

void ArchiveWriter::location_property(OTF2_LocationRef location, std::string_view name,
                                      uint64_t value) {
  location_properties_.push_back({location, string(name), value});
}

void ArchiveWriter::tap(EventTap* tap, bool write_events) {
  if (!write_events && !tap) fail("OTF2: events neither written nor tapped");
  for (const auto& [id, loc] : locations_) {
    if (loc.writer || loc.events) fail("OTF2: the tap changed after events of location {}", id);
  }
  tap_ = tap;
  write_events_ = write_events;
}

EventWriter ArchiveWriter::event_writer(OTF2_LocationRef location) {
  if (write_events_) return {*this, events(location), location, nullptr};
  return {*this, nullptr, location, &locations_[location].events};
}

OTF2_EvtWriter* ArchiveWriter::events(OTF2_LocationRef location) {
  if (!write_events_) fail("OTF2: the events of location {} go to the tap only", location);
  auto it = locations_.try_emplace(location).first;
  if (it->second.finished) fail("OTF2: events written after location {} was finished", location);
  if (!it->second.writer) {
    it->second.writer = OTF2_Archive_GetEvtWriter(archive_.get(), location);
    if (!it->second.writer) fail("OTF2: cannot open the event writer of location {}", location);
  }
  return it->second.writer;
}

namespace {

// OTF2 reports some failures only to its error callback: OTF2_Archive_Close returns success when
// the anchor file could not be written (a full disk), leaving it empty, and closing an event
// writer whose flush failed answers only INTEGRITY_FAULT. What OTF2 reported first is the cause
// (a full disk); the status codes that follow say only that something already went wrong.
template <typename Write>
void with_cause(const std::string& what, Write write) {
  ErrorCapture errors;
  try {
    write();
  } catch (const Error& e) {
    if (errors.first().empty()) throw;
    fail("{} ({})", e.what(), errors.first());
  }
  if (!errors.first().empty()) fail("OTF2: {} failed: {}", what, errors.first());
}

}  // namespace

void ArchiveWriter::external_events(OTF2_LocationRef location, uint64_t events) {
  Location& loc = locations_[location];
  if (loc.writer) fail("OTF2: location {} has events of its own", location);
  loc.finished = true;
  loc.events = events;
}

std::filesystem::path ArchiveWriter::event_file(OTF2_LocationRef location) const {
  return anchor_.parent_path() / anchor_.stem() / fmt::format("{}.evt", location);
}

void ArchiveWriter::finish_events(OTF2_LocationRef location) {
  with_cause(fmt::format("writing the events of location {}", location), [&] {
    OTF2_EvtWriter* w = events(location);
    Location& loc = locations_.at(location);
    check(OTF2_EvtWriter_GetNumberOfEvents(w, &loc.events), "counting events");
    check(OTF2_Archive_CloseEvtWriter(archive_.get(), w), "closing an event writer");
    loc.writer = nullptr;
    loc.finished = true;
  });
}

void ArchiveWriter::close() {
  if (closed_) return;
  closed_ = true;
  with_cause(fmt::format("closing {}", anchor_.string()), [&] { write_files(); });
  anchor_written(anchor_);
}

void ArchiveWriter::write_files() {
  auto* a = archive_.get();
  std::map<OTF2_LocationRef, uint64_t> event_counts;
  for (auto& [id, loc] : locations_) {
    if (!loc.defined) fail("OTF2: events written for location {}, which was never defined", id);
    if (loc.finished || !write_events_) {
      event_counts[id] = loc.events;
      continue;
    }
    // A location without events still needs its (empty) event file: readers open one per
    // defined location and refuse the archive when it is missing.
    OTF2_EvtWriter* w = events(id);
    uint64_t n = 0;
    check(OTF2_EvtWriter_GetNumberOfEvents(w, &n), "counting events");
    check(OTF2_Archive_CloseEvtWriter(a, w), "closing an event writer");
    loc.writer = nullptr;
    event_counts[id] = n;
  }
  check(OTF2_Archive_CloseEvtFiles(a), "closing event files");
  // Local definition files are empty where all definitions are global, but readers expect them.
  check(OTF2_Archive_OpenDefFiles(a), "opening definition files");
  for (auto& [id, loc] : locations_) {
    OTF2_DefWriter* dw = OTF2_Archive_GetDefWriter(a, id);
    if (!dw) fail("OTF2: cannot open the definition writer of location {}", id);
    if (auto l = local_definitions_.find(id); l != local_definitions_.end()) l->second->write(dw);
    check(OTF2_Archive_CloseDefWriter(a, dw), "closing a definition writer");
  }
  check(OTF2_Archive_CloseDefFiles(a), "closing definition files");

  OTF2_GlobalDefWriter* gw = OTF2_Archive_GetGlobalDefWriter(a);
  if (!gw) fail("OTF2: cannot open the global definition writer");
  write_definitions(gw, event_counts);
  check(OTF2_Archive_CloseGlobalDefWriter(a, gw), "closing the global definition writer");
  // OTF2_Archive_Close writes the anchor file.
  check(OTF2_Archive_Close(archive_.release()), "closing the archive");
}

void ArchiveWriter::write_definitions(OTF2_GlobalDefWriter* gw,
                                      std::map<OTF2_LocationRef, uint64_t>& event_counts) {
  write_system_definitions(gw, event_counts);
  write_region_and_metric_definitions(gw);
  write_group_and_io_definitions(gw);
}

// The clock, strings, attributes and where things ran: nodes, processes, threads.
void ArchiveWriter::write_system_definitions(OTF2_GlobalDefWriter* gw,
                                             std::map<OTF2_LocationRef, uint64_t>& event_counts) {
  check(OTF2_GlobalDefWriter_WriteClockProperties(gw, clock_.resolution, clock_.global_offset,
                                                  clock_.trace_length, clock_.realtime),
        "writing clock properties");
  for (auto& p : paradigms_) {
    check(OTF2_GlobalDefWriter_WriteParadigm(gw, p.paradigm, p.name, p.cls), "writing a paradigm");
  }
  for (size_t i = 0; i < strings_.size(); ++i) {
    check(OTF2_GlobalDefWriter_WriteString(gw, static_cast<Ref>(i), strings_[i].c_str()),
          "writing a string");
  }
  for (size_t i = 0; i < attribute_defs_.size(); ++i) {
    auto& d = attribute_defs_[i];
    check(
        OTF2_GlobalDefWriter_WriteAttribute(gw, static_cast<Ref>(i), d.name, d.description, d.type),
        "writing an attribute");
  }
  for (size_t i = 0; i < nodes_.size(); ++i) {
    auto& n = nodes_[i];
    check(OTF2_GlobalDefWriter_WriteSystemTreeNode(gw, static_cast<Ref>(i), n.name, n.class_name,
                                                   n.parent),
          "writing a system tree node");
  }
  for (auto& p : node_properties_) {
    check(OTF2_GlobalDefWriter_WriteSystemTreeNodeProperty(gw, p.owner, p.name, p.type, p.value),
          "writing a system tree node property");
  }
  for (size_t i = 0; i < location_groups_.size(); ++i) {
    auto& g = location_groups_[i];
    check(OTF2_GlobalDefWriter_WriteLocationGroup(gw, static_cast<Ref>(i), g.name, g.type, g.node,
                                                  OTF2_UNDEFINED_LOCATION_GROUP),
          "writing a location group");
  }
  for (auto& p : group_properties_) {
    check(OTF2_GlobalDefWriter_WriteLocationGroupProperty(gw, p.owner, p.name, p.type, p.value),
          "writing a location group property");
  }
  for (auto& [id, loc] : locations_) {
    check(
        OTF2_GlobalDefWriter_WriteLocation(gw, id, loc.name, loc.type, event_counts[id], loc.group),
        "writing a location");
  }
  for (auto& p : location_properties_) {
    OTF2_AttributeValue v;
    v.uint64 = p.value;
    check(OTF2_GlobalDefWriter_WriteLocationProperty(gw, p.location, p.name, OTF2_TYPE_UINT64, v),
          "writing a location property");
  }
}

void ArchiveWriter::write_region_and_metric_definitions(OTF2_GlobalDefWriter* gw) {
  for (size_t i = 0; i < regions_.size(); ++i) {
    auto& r = regions_[i];
    check(OTF2_GlobalDefWriter_WriteRegion(gw, static_cast<Ref>(i), r.name, r.canonical,
                                           r.description, r.role, r.paradigm, OTF2_REGION_FLAG_NONE,
                                           OTF2_UNDEFINED_STRING, 0, 0),
          "writing a region");
  }
  for (size_t i = 0; i < metric_members_.size(); ++i) {
    auto& m = metric_members_[i];
    check(OTF2_GlobalDefWriter_WriteMetricMember(gw, static_cast<Ref>(i), m.name, m.description,
                                                 m.type, m.mode, m.value_type, OTF2_BASE_DECIMAL, 0,
                                                 m.unit),
          "writing a metric member");
  }
  for (size_t i = 0; i < metric_classes_.size(); ++i) {
    auto& c = metric_classes_[i];
    check(OTF2_GlobalDefWriter_WriteMetricClass(gw, static_cast<Ref>(i),
                                                static_cast<uint8_t>(c.members.size()),
                                                c.members.data(), c.occurrence, c.kind),
          "writing a metric class");
  }
}

// Groups before the communicators that refer to them, before the I/O handles that refer to those.
void ArchiveWriter::write_group_and_io_definitions(OTF2_GlobalDefWriter* gw) {
  for (size_t i = 0; i < groups_.size(); ++i) {
    auto& g = groups_[i];
    check(OTF2_GlobalDefWriter_WriteGroup(gw, static_cast<Ref>(i), g.name, g.type, g.paradigm,
                                          g.flags, static_cast<uint32_t>(g.members.size()),
                                          g.members.data()),
          "writing a group");
  }
  // After the groups they refer to, before the I/O handles that refer to them.
  for (size_t i = 0; i < comms_.size(); ++i) {
    auto& c = comms_[i];
    check(OTF2_GlobalDefWriter_WriteComm(gw, static_cast<Ref>(i), c.name, c.group, c.parent,
                                         OTF2_COMM_FLAG_NONE),
          "writing a communicator");
  }
  for (size_t i = 0; i < io_paradigms_.size(); ++i) {
    auto& p = io_paradigms_[i];
    check(OTF2_GlobalDefWriter_WriteIoParadigm(gw, static_cast<Ref>(i), p.identification, p.name,
                                               p.cls, p.flags, 0, nullptr, nullptr, nullptr),
          "writing an I/O paradigm");
  }
  for (size_t i = 0; i < io_files_.size(); ++i) {
    auto& f = io_files_[i];
    check(OTF2_GlobalDefWriter_WriteIoRegularFile(gw, static_cast<Ref>(i), f.name, f.scope),
          "writing an I/O file");
  }
  for (const Property& p : io_file_properties_) {
    check(OTF2_GlobalDefWriter_WriteIoFileProperty(gw, p.owner, p.name, p.type, p.value),
          "writing an I/O file property");
  }
  for (size_t i = 0; i < io_handles_.size(); ++i) {
    auto& h = io_handles_[i];
    check(OTF2_GlobalDefWriter_WriteIoHandle(gw, static_cast<Ref>(i), h.name, h.file, h.paradigm,
                                             h.flags, h.comm, h.parent),
          "writing an I/O handle");
  }
}

}  // namespace ezio::otf2
