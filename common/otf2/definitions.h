// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// An archive's global definitions as it wrote them: maps keyed by the archive's own ids (EZTrace's
// are sparse, duplicated or dangling, so no arrays and no assumptions), names left as string refs,
// so that a converter can rewrite them and an analyzer can resolve what it needs.
#include <otf2/otf2.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ezio::otf2 {

using Ref = uint32_t;

struct RegionDef {
  Ref name, canonical, description;
  OTF2_RegionRole role;
  OTF2_Paradigm paradigm;
};
struct LocationDef {
  Ref name;
  OTF2_LocationType type;
  Ref group;
  uint64_t events;  // as declared: EZTrace's counts are wrong, writers count again
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

// A definition whose id was already defined is ignored (the first one counts), except groups and
// comms, which are all kept.
struct Definitions {
  // Ticks per second; nanoseconds when the archive says nothing.
  uint64_t resolution = 1'000'000'000;
  uint64_t global_offset = 0, trace_length = 0;
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
  std::vector<Property> io_file_properties;
  std::vector<LocationProperty> location_properties;
  size_t duplicate_definitions = 0;  // ids defined twice (EZTrace's Group/Comm)

  // The string of a ref, "" when it is undefined (tolerated, never an error).
  const std::string& str(Ref r) const;
  // A UINT64-valued system tree node (the first that has it) / location group / location
  // property by name.
  std::optional<uint64_t> node_property(std::string_view name) const;
  std::optional<uint64_t> group_property(Ref group, std::string_view name) const;
  std::optional<uint64_t> location_property(OTF2_LocationRef loc, std::string_view name) const;
  // The file name behind an IoHandle; nullopt when the handle or its file is undefined.
  std::optional<std::string> handle_path(Ref handle) const;
};

// An integer-typed attribute or property value as int64 (UINT64 wraps); nullopt for other types.
// Inline: analyzers call it for every attribute of every event.
inline std::optional<int64_t> integer_value(OTF2_Type type, const OTF2_AttributeValue& v) {
  switch (type) {
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
      return std::nullopt;
  }
}

// Sets the callbacks that fill a Definitions, which is their user data.
void set_definition_callbacks(OTF2_GlobalDefReaderCallbacks* callbacks);

}  // namespace ezio::otf2
