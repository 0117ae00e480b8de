#pragma once
// An OTF2 archive held in memory, as the merge needs it: definitions in maps keyed by the ids the
// archive used (EZTrace's are sparse, duplicated or dangling, so no arrays and no assumptions),
// and the events of every location in file order.
#include <otf2/otf2.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ezio::converters {

using Ref = uint32_t;

struct Attribute {
  Ref id;
  OTF2_Type type;
  OTF2_AttributeValue value;
};

enum class EventKind {
  Enter,
  Leave,
  ThreadBegin,
  ThreadEnd,
  IoCreateHandle,
  IoDestroyHandle,
  IoDuplicateHandle,
  IoSeek,
  IoChangeStatusFlags,
  IoDeleteFile,
  IoOperationBegin,
  IoOperationTest,
  IoOperationIssued,
  IoOperationComplete,
  IoOperationCancelled,
  Metric,
  MpiSend,
  MpiIsend,
  MpiIsendComplete,
  MpiIrecvRequest,
  MpiRecv,
  MpiIrecv,
  MpiRequestTest,
  MpiRequestCancelled,
  MpiCollectiveBegin,
  MpiCollectiveEnd,
};
const char* event_kind_name(EventKind k);
// I/O events: their ref is an IoHandle (IoDeleteFile: an IoParadigm).
bool is_io_event(EventKind k);
// MPI events: those with a communicator have it in ref.
bool is_mpi_event(EventKind k);

// One event; the meaning of the generic fields depends on kind (see archive_reader.cpp, which
// fills them, and archive_events.cpp, which writes them back).
struct Event {
  EventKind kind;
  uint64_t time;
  Ref ref = 0;      // region, handle, comm (thread and MPI events), paradigm, metric
  Ref ref2 = 0;     // second handle (duplicate), file (delete)
  uint64_t a = 0;   // bytes request/result, offset request, sequence count, MPI message length
                    // or bytes sent
  uint64_t b = 0;   // matching id, offset result, MPI request id or bytes received
  uint32_t f1 = 0;  // mode, flags; MPI peer rank (receiver, sender) or collective operation
  uint32_t f2 = 0;  // flags; MPI tag or collective root
  uint32_t f3 = 0;  // flags
  std::vector<Attribute> attributes;
  std::vector<OTF2_Type> metric_types;
  std::vector<OTF2_MetricValue> metric_values;
};

struct RegionDef {
  Ref name, canonical, description;
  OTF2_RegionRole role;
  OTF2_Paradigm paradigm;
};
struct LocationDef {
  Ref name;
  OTF2_LocationType type;
  Ref group;
};
struct LocationGroupDef {
  Ref name;
  OTF2_LocationGroupType type;
  Ref node;
};
struct NodeDef {
  Ref name, class_name, parent;
};
struct AttributeDef {
  Ref name, description;
  OTF2_Type type;
};
struct IoParadigmDef {
  Ref identification, name;
  OTF2_IoParadigmClass cls;
  OTF2_IoParadigmFlag flags;
};
struct IoFileDef {
  Ref name, scope;
};
struct IoHandleDef {
  Ref name, file, paradigm;
  OTF2_IoHandleFlag flags;
  Ref comm, parent;
  size_t comm_index;  // into Definitions::comms: the latest comm of that id defined before it
};
// Groups and comms keep their definition order: EZTrace reuses ids, and a comm (an IoHandle)
// refers to the latest group (comm) of that id defined before it.
struct GroupDef {
  Ref id, name;
  OTF2_GroupType type;
  OTF2_Paradigm paradigm;
  OTF2_GroupFlag flags;
  std::vector<uint64_t> members;
};
struct CommDef {
  Ref id, name;
  size_t group_index;  // into Definitions::groups, or SIZE_MAX when the group is undefined
  Ref parent;
};
struct MetricMemberDef {
  Ref name, description;
  OTF2_MetricType type;
  OTF2_MetricMode mode;
  OTF2_Type value_type;
  Ref unit;
};
struct MetricClassDef {
  std::vector<Ref> members;
  OTF2_MetricOccurrence occurrence;
  OTF2_RecorderKind kind;
};
struct Property {
  Ref owner;
  Ref name;
  OTF2_Type type;
  OTF2_AttributeValue value;
};
struct LocationProperty {
  OTF2_LocationRef location;
  Ref name;
  OTF2_Type type;
  OTF2_AttributeValue value;
};

struct Definitions {
  uint64_t resolution = 1, global_offset = 0, trace_length = 0;
  uint64_t realtime = OTF2_UNDEFINED_TIMESTAMP;
  std::map<Ref, std::string> strings;
  std::map<Ref, NodeDef> nodes;
  std::map<Ref, LocationGroupDef> location_groups;
  std::map<OTF2_LocationRef, LocationDef> locations;
  std::map<Ref, RegionDef> regions;
  std::map<Ref, AttributeDef> attributes;
  std::map<Ref, IoParadigmDef> io_paradigms;
  std::map<Ref, IoFileDef> io_files;
  std::map<Ref, IoHandleDef> io_handles;
  std::map<Ref, MetricMemberDef> metric_members;
  std::map<Ref, MetricClassDef> metric_classes;
  std::vector<GroupDef> groups;
  std::vector<CommDef> comms;
  std::vector<Property> node_properties;
  std::vector<Property> group_properties;
  std::vector<LocationProperty> location_properties;
  size_t duplicate_definitions = 0;  // ids defined twice (EZTrace's Group/Comm)

  // The string of a ref, "" when it is undefined (tolerated, never an error).
  const std::string& str(Ref r) const;
  // A UINT64-valued location group / location property by name.
  std::optional<uint64_t> group_property(Ref group, std::string_view name) const;
  std::optional<uint64_t> location_property(OTF2_LocationRef loc, std::string_view name) const;
  // The file name behind an IoHandle; nullopt when the handle or its file is undefined.
  std::optional<std::string> handle_path(Ref handle) const;
};

struct Archive {
  std::filesystem::path anchor;
  Definitions defs;
  std::map<OTF2_LocationRef, std::vector<Event>> events;
  uint64_t unsupported_events = 0;  // records of kinds the model does not hold
};

// Reads a whole archive (anchor = the .otf2 file); throws ezio::Error when OTF2 cannot open it.
Archive read_archive(const std::filesystem::path& anchor);

}  // namespace ezio::converters
