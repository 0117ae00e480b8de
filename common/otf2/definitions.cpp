// SPDX-License-Identifier: GPL-2.0-only
#include "common/otf2/definitions.h"

#include <climits>

namespace ezio::otf2 {
namespace {

constexpr auto kOk = OTF2_CALLBACK_SUCCESS;

Definitions& defs(void* p) { return *static_cast<Definitions*>(p); }

}  // namespace

const std::string& Definitions::str(Ref r) const {
  static const std::string empty;
  auto it = strings.find(r);
  return it == strings.end() ? empty : it->second;
}

std::optional<uint64_t> Definitions::node_property(std::string_view name) const {
  for (const auto& p : node_properties) {
    if (p.type == OTF2_TYPE_UINT64 && str(p.name) == name) return p.value.uint64;
  }
  return std::nullopt;
}

std::optional<uint64_t> Definitions::group_property(Ref group, std::string_view name) const {
  for (const auto& p : group_properties) {
    if (p.owner == group && str(p.name) == name) return p.value.uint64;
  }
  return std::nullopt;
}

std::optional<uint64_t> Definitions::location_property(OTF2_LocationRef loc,
                                                       std::string_view name) const {
  for (const auto& p : location_properties) {
    if (p.location == loc && str(p.name) == name) return p.value.uint64;
  }
  return std::nullopt;
}

std::optional<std::string> Definitions::handle_path(Ref handle) const {
  auto h = io_handles.find(handle);
  if (h == io_handles.end()) return std::nullopt;
  auto f = io_files.find(h->second.file);
  if (f == io_files.end()) return std::nullopt;
  return str(f->second.name);
}

namespace {

// Where things ran: the clock, strings, nodes, processes and threads.
void set_system_callbacks(OTF2_GlobalDefReaderCallbacks* c) {
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
      c, +[](void* u, OTF2_LocationRef self, OTF2_StringRef name, OTF2_LocationType type,
             uint64_t events, OTF2_LocationGroupRef group) {
        defs(u).locations.try_emplace(self, LocationDef{name, type, group, events});
        return kOk;
      });
}

// What ran and on what: regions, attributes, I/O paradigms, files and handles.
void set_region_and_io_callbacks(OTF2_GlobalDefReaderCallbacks* c) {
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
  // Regular files and directories alike: a handle's file is a path.
  auto on_file =
      +[](void* u, OTF2_IoFileRef self, OTF2_StringRef name, OTF2_SystemTreeNodeRef scope) {
        defs(u).io_files.try_emplace(self, IoFileDef{name, scope});
        return kOk;
      };
  OTF2_GlobalDefReaderCallbacks_SetIoRegularFileCallback(c, on_file);
  OTF2_GlobalDefReaderCallbacks_SetIoDirectoryCallback(c, on_file);
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
}

// Groups, communicators and metrics.
void set_group_and_metric_callbacks(OTF2_GlobalDefReaderCallbacks* c) {
  OTF2_GlobalDefReaderCallbacks_SetGroupCallback(
      c, +[](void* u, OTF2_GroupRef self, OTF2_StringRef name, OTF2_GroupType type,
             OTF2_Paradigm paradigm, OTF2_GroupFlag flags, uint32_t n, const uint64_t* members) {
        auto& d = defs(u);
        for (const auto& g : d.groups) {
          if (g.id == self) ++d.duplicate_definitions;
        }
        d.groups.push_back({self, name, type, paradigm, flags, {}});
        if (members) d.groups.back().members.assign(members, members + n);
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
        auto [it, fresh] =
            defs(u).metric_classes.try_emplace(self, MetricClassDef{{}, occurrence, kind});
        if (fresh && members) it->second.members.assign(members, members + n);
        return kOk;
      });
}

// Properties of nodes, processes and threads.
void set_property_callbacks(OTF2_GlobalDefReaderCallbacks* c) {
  OTF2_GlobalDefReaderCallbacks_SetSystemTreeNodePropertyCallback(
      c, +[](void* u, OTF2_SystemTreeNodeRef node, OTF2_StringRef name, OTF2_Type type,
             OTF2_AttributeValue value) {
        defs(u).node_properties.push_back({node, name, type, value});
        return kOk;
      });
  OTF2_GlobalDefReaderCallbacks_SetIoFilePropertyCallback(
      c, +[](void* u, OTF2_IoFileRef file, OTF2_StringRef name, OTF2_Type type,
             OTF2_AttributeValue value) {
        defs(u).io_file_properties.push_back({file, name, type, value});
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

}  // namespace

void set_definition_callbacks(OTF2_GlobalDefReaderCallbacks* c) {
  set_system_callbacks(c);
  set_region_and_io_callbacks(c);
  set_group_and_metric_callbacks(c);
  set_property_callbacks(c);
}

}  // namespace ezio::otf2
