// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Writes one OTF2 archive: definitions are registered (and de-duplicated) while events are written,
// then everything is written in the order OTF2 readers expect when close() is called.
// Events of one location must be written with non-decreasing timestamps (OTF2 rejects others).
#include <otf2/otf2.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/otf2/definitions.h"  // Ref, and the metric definitions both sides share
#include "common/otf2/event_tap.h"
#include "common/otf2/event_writer.h"
#include "common/otf2/local_definitions.h"
#include "common/schema/attributes.h"
#include "common/schema/files.h"

namespace ezio::otf2 {

struct ArchiveDeleter {
  void operator()(OTF2_Archive* a) const;
};
using ArchivePtr = std::unique_ptr<OTF2_Archive, ArchiveDeleter>;

struct AttributeListDeleter {
  void operator()(OTF2_AttributeList* l) const { OTF2_AttributeList_Delete(l); }
};
using AttributeListPtr = std::unique_ptr<OTF2_AttributeList, AttributeListDeleter>;

struct Clock {
  uint64_t resolution = 1'000'000'000;  // ticks per second
  uint64_t global_offset = 0;
  uint64_t trace_length = 0;
  uint64_t realtime = OTF2_UNDEFINED_TIMESTAMP;  // ns since the epoch at global_offset
};

class ArchiveWriter {
 public:
  // The size of its event chunks: an event file of another archive can only be taken into this
  // one (external_events) when it was written with chunks of this size.
  static constexpr uint64_t kEventChunkBytes = 1024 * 1024;

  // Creates <dir>/<name>.otf2 and friends; dir must not hold an archive of that name.
  explicit ArchiveWriter(const std::filesystem::path& dir,
                         std::string name = std::string(schema::kArchiveName));
  ~ArchiveWriter();
  ArchiveWriter(const ArchiveWriter&) = delete;
  ArchiveWriter& operator=(const ArchiveWriter&) = delete;

  Ref string(std::string_view s);
  Ref region(std::string_view name, std::string_view canonical_name, std::string_view description,
             OTF2_RegionRole role, OTF2_Paradigm paradigm = OTF2_PARADIGM_NONE);
  // A region of its own, even when another has that canonical name (told apart by description).
  Ref distinct_region(std::string_view name, std::string_view canonical_name,
                      std::string_view description, OTF2_RegionRole role);
  Ref attribute(std::string_view name, std::string_view description, OTF2_Type type);
  // An attribute of the trace schema, with the type EventAttributes checks its values against.
  TypedAttribute attribute(const schema::AttributeSpec& spec) {
    return {attribute(spec.name, spec.description, spec.type), spec.type};
  }
  Ref system_tree_node(std::string_view name, std::string_view class_name,
                       Ref parent = OTF2_UNDEFINED_SYSTEM_TREE_NODE);
  Ref location_group(std::string_view name, OTF2_LocationGroupType type, Ref node);
  // Thread locations use the TID as id; others pick ids that cannot clash (see trace-model.md).
  void location(OTF2_LocationRef id, std::string_view name, OTF2_LocationType type, Ref group);
  Ref io_paradigm(std::string_view identification, std::string_view name, OTF2_IoParadigmClass cls,
                  OTF2_IoParadigmFlag flags);
  Ref io_file(std::string_view path, Ref scope_node);
  // A file of its own, even when another has that path (the same path on another device).
  Ref distinct_io_file(std::string_view path, Ref scope_node);
  void io_file_property(Ref file, std::string_view name, std::string_view value);
  Ref io_handle(std::string_view name, Ref file, Ref paradigm,
                OTF2_IoHandleFlag flags = OTF2_IO_HANDLE_FLAG_NONE,
                Ref parent = OTF2_UNDEFINED_IO_HANDLE, Ref comm = OTF2_UNDEFINED_COMM);
  Ref group(std::string_view name, OTF2_GroupType type, OTF2_Paradigm paradigm,
            OTF2_GroupFlag flags, std::vector<uint64_t> members);
  // A communicator over a COMM_GROUP group (parent: another comm or OTF2_UNDEFINED_COMM).
  Ref comm(std::string_view name, Ref group, Ref parent = OTF2_UNDEFINED_COMM);
  Ref paradigm(OTF2_Paradigm paradigm, std::string_view name, OTF2_ParadigmClass cls);
  // A metric member (one counter) and a metric class grouping members for MetricEvents.
  Ref metric_member(std::string_view name, std::string_view description, OTF2_MetricType type,
                    OTF2_MetricMode mode, OTF2_Type value_type, std::string_view unit);
  Ref metric_class(std::vector<Ref> members, OTF2_MetricOccurrence occurrence,
                   OTF2_RecorderKind kind);
  // The id the next metric_class() will return: MetricEvents may be written before their class
  // is defined (its definitions interned at the end keep the other ids as they were).
  Ref next_metric_class() const { return static_cast<Ref>(metric_classes_.size()); }

  void system_tree_node_property(Ref node, std::string_view name, OTF2_Type type,
                                 OTF2_AttributeValue value);
  void system_tree_node_property(Ref node, std::string_view name, uint64_t value);
  void system_tree_node_property(Ref node, std::string_view name, std::string_view value);
  void location_group_property(Ref group, std::string_view name, uint64_t value);
  void location_group_property(Ref group, std::string_view name, std::string_view value);
  void location_property(OTF2_LocationRef location, std::string_view name, uint64_t value);
  void clock(const Clock& c) { clock_ = c; }

  // The event writer of a location. Events may be written before the location is defined (its
  // name may only be known at the end of a recording), but close() fails if it never is.
  // The raw writer is for a converter that copies events of every kind (the merge); the others
  // write through event_writer()'s typed events.
  OTF2_EvtWriter* events(OTF2_LocationRef location);
  EventWriter event_writer(OTF2_LocationRef location);
  // Every event written through event_writer() from now on is also given to tap (nullptr: none).
  // With write_events false, before any event, the tap is its only copy: OTF2 encodes none and
  // no event file is written; the definitions declare how many each location was given. Such an
  // archive is read only with the tap's copy (eziotrace run's kernel part unless kept: each event
  // encoded once, into the merge's store, not also by OTF2).
  void tap(EventTap* tap, bool write_events = true);
  EventTap* tap() const { return tap_; }
  bool writes_events() const { return write_events_; }
  // The event EventWriter hands the tap, reused so that tapping allocates nothing once warm.
  Event& tap_event() { return tap_event_; }
  // The attributes of the next event with attributes, when OTF2 takes no event (!writes_events).
  std::vector<Attribute>& pending_attributes() { return pending_attributes_; }
  // Writes out a location's events and frees its buffers (up to 4 MiB): for a writer that
  // writes its locations one after the other. No event may follow.
  void finish_events(OTF2_LocationRef location);
  // A location whose event file the caller puts in place after close() (merge-hosts' assembly
  // links a part's own file): no event file is written for it, `events` is what it declares.
  void external_events(OTF2_LocationRef location, uint64_t events);
  // What the location's local definition file holds (otherwise nothing); shared by locations.
  void local_definitions(OTF2_LocationRef location, std::shared_ptr<const LocalDefinitions> d) {
    local_definitions_[location] = std::move(d);
  }
  // Where a location's event file is once the archive is closed.
  std::filesystem::path event_file(OTF2_LocationRef location) const;
  // A reusable attribute list; OTF2 empties it after each event written with it.
  OTF2_AttributeList* attributes() { return attributes_.get(); }

  // Writes definitions and closes the archive. After a failure the archive is left incomplete.
  void close();
  const std::filesystem::path& anchor() const { return anchor_; }

 private:
  struct Location {
    Ref name;
    OTF2_LocationType type;
    Ref group;
    OTF2_EvtWriter* writer = nullptr;
    bool defined = false;
    bool finished = false;  // its events are written out (finish_events)
    uint64_t events = 0;    // then, how many; without event files, how many the tap was given
  };
  struct Property {
    Ref owner;
    Ref name;
    OTF2_Type type;
    OTF2_AttributeValue value;
  };
  template <typename T>
  using Table = std::vector<T>;

  void write_files();
  void write_definitions(OTF2_GlobalDefWriter* w,
                         std::map<OTF2_LocationRef, uint64_t>& event_counts);
  void write_system_definitions(OTF2_GlobalDefWriter* gw,
                                std::map<OTF2_LocationRef, uint64_t>& event_counts);
  void write_region_and_metric_definitions(OTF2_GlobalDefWriter* gw);
  void write_group_and_io_definitions(OTF2_GlobalDefWriter* gw);

  ArchivePtr archive_;
  AttributeListPtr attributes_;
  std::filesystem::path anchor_;
  Clock clock_;
  bool closed_ = false;
  EventTap* tap_ = nullptr;
  bool write_events_ = true;
  Event tap_event_{};
  std::vector<Attribute> pending_attributes_;

  std::map<std::string, Ref, std::less<>> string_ids_;
  std::vector<std::string> strings_;
  std::map<std::string, Ref, std::less<>> region_ids_;  // by canonical name
  struct RegionDef {
    Ref name, canonical, description;
    OTF2_RegionRole role;
    OTF2_Paradigm paradigm;
  };
  std::vector<RegionDef> regions_;
  std::map<std::string, Ref, std::less<>> attribute_ids_;
  struct AttributeDef {
    Ref name, description;
    OTF2_Type type;
  };
  std::vector<AttributeDef> attribute_defs_;
  struct NodeDef {
    Ref name, class_name, parent;
  };
  std::vector<NodeDef> nodes_;
  struct GroupDef {
    Ref name;
    OTF2_LocationGroupType type;
    Ref node;
  };
  std::vector<GroupDef> location_groups_;
  std::map<OTF2_LocationRef, Location> locations_;
  std::map<OTF2_LocationRef, std::shared_ptr<const LocalDefinitions>> local_definitions_;
  struct IoParadigmDef {
    Ref identification, name;
    OTF2_IoParadigmClass cls;
    OTF2_IoParadigmFlag flags;
  };
  std::vector<IoParadigmDef> io_paradigms_;
  std::map<std::pair<std::string, Ref>, Ref, std::less<>> io_file_ids_;
  struct IoFileDef {
    Ref name, scope;
  };
  std::vector<IoFileDef> io_files_;
  std::vector<Property> io_file_properties_;
  struct IoHandleDef {
    Ref name, file, paradigm;
    OTF2_IoHandleFlag flags;
    Ref parent;
    Ref comm;
  };
  std::vector<IoHandleDef> io_handles_;
  struct GroupMembersDef {
    Ref name;
    OTF2_GroupType type;
    OTF2_Paradigm paradigm;
    OTF2_GroupFlag flags;
    std::vector<uint64_t> members;
  };
  std::vector<GroupMembersDef> groups_;
  struct CommDef {
    Ref name, group, parent;
  };
  std::vector<CommDef> comms_;
  struct ParadigmDef {
    OTF2_Paradigm paradigm;
    Ref name;
    OTF2_ParadigmClass cls;
  };
  std::vector<ParadigmDef> paradigms_;
  std::vector<MetricMemberDef> metric_members_;
  std::vector<MetricClassDef> metric_classes_;
  std::vector<Property> node_properties_;
  std::vector<Property> group_properties_;
  struct LocationProperty {
    OTF2_LocationRef location;
    Ref name;
    uint64_t value;
  };
  std::vector<LocationProperty> location_properties_;
};

}  // namespace ezio::otf2
