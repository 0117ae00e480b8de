#pragma once
// Streams an OTF2 archive: global definitions are read once into maps (ids may be sparse,
// duplicated or dangling, as in EZTrace archives), then events are delivered location by location,
// in time order within each location. Memory does not grow with the number of events: each
// location's event file is opened, read in batches and closed before the next one.
#include <otf2/otf2.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace ezio::otf2 {

using Ref = uint32_t;

struct ReaderDeleter {
  void operator()(OTF2_Reader* r) const;
};
using ReaderPtr = std::unique_ptr<OTF2_Reader, ReaderDeleter>;

struct RegionDef {
  std::string name;       // display name (e.g. "write")
  std::string canonical;  // "<layer>:<name>" for kernel regions, see docs/trace-model.md
  OTF2_RegionRole role = OTF2_REGION_ROLE_UNKNOWN;
  OTF2_Paradigm paradigm = OTF2_PARADIGM_UNKNOWN;
};

struct LocationGroupDef {
  std::string name;
  OTF2_LocationGroupType type = OTF2_LOCATION_GROUP_TYPE_UNKNOWN;
};

struct LocationDef {
  std::string name;
  OTF2_LocationType type = OTF2_LOCATION_TYPE_UNKNOWN;
  uint64_t declared_events = 0;  // as written in the definitions; EZTrace's counts are wrong
  Ref group = OTF2_UNDEFINED_LOCATION_GROUP;
};

struct IoHandleDef {
  std::string name;
  Ref file = OTF2_UNDEFINED_IO_FILE;
};

struct Definitions {
  uint64_t resolution = 1'000'000'000;  // ticks per second
  uint64_t global_offset = 0;
  uint64_t trace_length = 0;

  std::unordered_map<Ref, std::string> strings;
  std::map<Ref, RegionDef> regions;
  std::map<Ref, LocationGroupDef> location_groups;
  std::map<OTF2_LocationRef, LocationDef> locations;
  std::map<Ref, std::string> io_files;  // path
  std::map<Ref, IoHandleDef> io_handles;
  std::map<Ref, std::string> attributes;           // name
  std::map<Ref, std::string> metric_members;       // name (e.g. "pagecache.hits")
  std::map<Ref, std::vector<Ref>> metric_classes;  // members, in the order of Metric values
  // SystemTreeNode properties (EZIOTRACE::LOST::<layer>, EZIOTRACE::STATUS...), any node.
  std::map<std::string, uint64_t> node_uint_properties;
  std::map<std::string, std::string> node_string_properties;
  std::map<Ref, uint64_t> group_pids;                  // EZIOTRACE::PID
  std::map<OTF2_LocationRef, uint64_t> location_tids;  // EZIOTRACE::TID

  // Dangling references resolve to an empty string rather than failing: EZTrace writes them.
  const std::string& string(Ref id) const;
  const RegionDef* region(Ref id) const;
  const LocationDef* location(OTF2_LocationRef id) const;
  // The path of the file behind a handle: its IoFile if defined, else the handle's name without
  // eziotrace's " [pid P fd F]" suffix, else "<handle N>".
  std::string handle_path(Ref handle) const;
  // Name of the process group a location belongs to ("" if unknown).
  std::string process_of(OTF2_LocationRef loc) const;
};

// The attributes of an event that analyzers use; recognised by name suffix so that every layer's
// attributes (`syscall.bytes`, `block.bytes`...) are understood.
struct CallAttributes {
  bool has_bytes = false, has_result = false, has_offset = false;
  uint64_t bytes = 0;  // *.bytes: bytes requested
  int64_t result = 0;  // *.result: return value
  int64_t offset = 0;  // *.offset: explicit offset
  bool point = false;  // *.point != 0: a single tracepoint, its duration is unknown (not zero)
};

// Receives the events; default implementations ignore them.
class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void begin_location(OTF2_LocationRef) {}
  virtual void end_location(OTF2_LocationRef) {}
  virtual void enter(OTF2_LocationRef, uint64_t /*time*/, Ref /*region*/, const CallAttributes&) {}
  virtual void leave(OTF2_LocationRef, uint64_t /*time*/, Ref /*region*/, const CallAttributes&) {}
  // matching_id pairs the begin of an operation with its completion or cancellation; operations
  // outside any region (block requests) overlap and are paired by it.
  virtual void io_begin(OTF2_LocationRef, uint64_t /*time*/, Ref /*handle*/, OTF2_IoOperationMode,
                        uint64_t /*bytes_requested*/, uint64_t /*matching_id*/,
                        const CallAttributes&) {}
  virtual void io_complete(OTF2_LocationRef, uint64_t /*time*/, Ref /*handle*/, uint64_t /*bytes*/,
                           uint64_t /*matching_id*/) {}
  virtual void io_cancelled(OTF2_LocationRef, uint64_t /*time*/, Ref /*handle*/,
                            uint64_t /*matching_id*/) {}
  // A Metric event; values[i] belongs to member i of the metric class, integers as uint64 (doubles
  // are converted).
  virtual void metric(OTF2_LocationRef, uint64_t /*time*/, Ref /*metric_class*/,
                      const std::vector<uint64_t>& /*values*/) {}
  virtual void io_seek(OTF2_LocationRef, uint64_t /*time*/, Ref /*handle*/,
                       uint64_t /*offset_result*/) {}
  virtual void io_create_handle(OTF2_LocationRef, uint64_t /*time*/, Ref /*handle*/) {}
  virtual void io_destroy_handle(OTF2_LocationRef, uint64_t /*time*/, Ref /*handle*/) {}
};

struct ReadProgress {
  uint64_t events = 0;           // read so far
  uint64_t declared_events = 0;  // sum of the locations' declared counts (may be wrong)
  size_t locations_done = 0;
  size_t locations = 0;
};

class ArchiveReader {
 public:
  // `path` is the anchor (.otf2) file or a directory holding exactly one. Throws ezio::Error with
  // a message naming the path when it is not a readable archive or its definitions are corrupt.
  explicit ArchiveReader(const std::filesystem::path& path);
  ~ArchiveReader();
  ArchiveReader(const ArchiveReader&) = delete;
  ArchiveReader& operator=(const ArchiveReader&) = delete;

  const Definitions& defs() const { return defs_; }
  const std::filesystem::path& anchor() const { return anchor_; }

  // Streams all events to `sink`; `progress` (optional) is called between batches of events.
  // Locations for which `select` returns false are skipped without being read.
  // Exceptions thrown by the sink propagate after OTF2 has been left cleanly.
  void read_events(EventSink& sink, const std::function<void(const ReadProgress&)>& progress = {},
                   const std::function<bool(OTF2_LocationRef)>& select = {});

 private:
  void read_definitions();

  std::filesystem::path anchor_;
  ReaderPtr reader_;
  Definitions defs_;
};

// The anchor file named by `path` (see ArchiveReader); throws ezio::Error if there is none.
std::filesystem::path find_anchor(const std::filesystem::path& path);

}  // namespace ezio::otf2
