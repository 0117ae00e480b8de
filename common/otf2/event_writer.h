// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Typed events of one location of an ArchiveWriter: what eziotrace's own archives hold (ENTER and
// LEAVE, I/O handles and operations, metrics), each written through the one error path
// (otf2::written: a failed write, e.g. a full disk, becomes an ezio::Error). The attributes of an
// event are those of common/schema/attributes.h, added with the type the schema gives them.
// A converter that copies events of every kind (the merge) writes through ArchiveWriter::events().
#include <otf2/otf2.h>

#include <concepts>
#include <cstdint>
#include <string_view>
#include <type_traits>
#include <vector>

#include "common/otf2/definitions.h"
#include "common/otf2/events.h"
#include "common/schema/attributes.h"

namespace ezio::otf2 {

class ArchiveWriter;

// An attribute definition with the type its values must have.
struct TypedAttribute {
  Ref ref = OTF2_UNDEFINED_ATTRIBUTE;
  OTF2_Type type = OTF2_TYPE_NONE;
};

// The attributes of the next event, in the writer's reusable list (OTF2 empties it when the event
// is written), or, when OTF2 takes no event (ArchiveWriter::writes_events), straight in the tap's
// form. Values are stored with the attribute's own type; a string value is interned.
class EventAttributes {
 public:
  explicit EventAttributes(ArchiveWriter& w);
  template <std::integral T>
  EventAttributes& add(TypedAttribute a, T value) {
    if constexpr (std::is_signed_v<T>)
      return add_signed(a, value);
    else
      return add_unsigned(a, value);
  }
  EventAttributes& add_string(TypedAttribute a, Ref string);
  EventAttributes& add_string(TypedAttribute a, std::string_view string);
  EventAttributes& add_io_file(TypedAttribute a, Ref file);
  OTF2_AttributeList* list() const { return list_; }

 private:
  EventAttributes& add_signed(TypedAttribute a, int64_t value);
  EventAttributes& add_unsigned(TypedAttribute a, uint64_t value);
  EventAttributes& add_value(TypedAttribute a, OTF2_AttributeValue value);

  ArchiveWriter& w_;
  OTF2_AttributeList* list_;
  std::vector<Attribute>* pending_;  // the tap's form, or nullptr: OTF2's list
};

class EventWriter {
 public:
  EventWriter() = default;  // writes nothing: to be assigned one that does
  // w nullptr: the events go to the archive's tap only, counted in *tapped_only.
  EventWriter(ArchiveWriter& archive, OTF2_EvtWriter* w, OTF2_LocationRef location,
              uint64_t* tapped_only)
      : archive_(&archive), w_(w), location_(location), tapped_only_(tapped_only) {}

  // The attribute list of the next event written with it.
  EventAttributes attributes() const { return EventAttributes(*archive_); }

  void enter(uint64_t t, Ref region) const;
  void enter(uint64_t t, Ref region, const EventAttributes& attrs) const;
  void leave(uint64_t t, Ref region) const;

  void io_create_handle(uint64_t t, Ref handle, OTF2_IoAccessMode mode,
                        OTF2_IoCreationFlag creation, OTF2_IoStatusFlag status) const;
  void io_destroy_handle(uint64_t t, Ref handle) const;
  void io_duplicate_handle(uint64_t t, Ref old_handle, Ref new_handle,
                           OTF2_IoStatusFlag status) const;
  void io_seek(uint64_t t, Ref handle, int64_t offset_request, OTF2_IoSeekOption whence,
               uint64_t offset_result) const;

  // An I/O operation: begin, then (for a non-blocking one) issued, then complete or cancelled,
  // matched by matching_id.
  void io_operation_begin(uint64_t t, Ref handle, OTF2_IoOperationMode mode,
                          OTF2_IoOperationFlag flags, uint64_t bytes_request,
                          uint64_t matching_id) const;
  void io_operation_begin(uint64_t t, Ref handle, OTF2_IoOperationMode mode,
                          OTF2_IoOperationFlag flags, uint64_t bytes_request, uint64_t matching_id,
                          const EventAttributes& attrs) const;
  void io_operation_issued(uint64_t t, Ref handle, uint64_t matching_id) const;
  void io_operation_complete(uint64_t t, Ref handle, uint64_t bytes, uint64_t matching_id) const;
  void io_operation_cancelled(uint64_t t, Ref handle, uint64_t matching_id) const;

  // A metric of one UINT64 member (the classes eziotrace defines).
  void metric(uint64_t t, Ref metric_class, uint64_t value) const;
  void metric(uint64_t t, Ref metric_class, uint64_t value, const EventAttributes& attrs) const;

 private:
  void io_begin(uint64_t t, Ref handle, OTF2_IoOperationMode mode, OTF2_IoOperationFlag flags,
                uint64_t bytes_request, uint64_t matching_id, OTF2_AttributeList* attrs) const;
  void write_metric(uint64_t t, Ref metric_class, uint64_t value, OTF2_AttributeList* attrs) const;
  // With a tap (ArchiveWriter::tap), the event about to be written as a reader would decode it,
  // its attributes taken from attrs before OTF2 empties the list; else nullptr.
  Event* tapped(EventKind kind, uint64_t t, OTF2_AttributeList* attrs) const;
  Event* tap_copy(EventKind kind, uint64_t t, OTF2_AttributeList* attrs) const;
  // Has OTF2 take the event (write() returns its status), or only counts it; then gives the tap
  // the event.
  template <typename Write>
  void put(const Event* e, Write write) const;

  ArchiveWriter* archive_ = nullptr;
  OTF2_EvtWriter* w_ = nullptr;
  OTF2_LocationRef location_ = 0;
  uint64_t* tapped_only_ = nullptr;
};

}  // namespace ezio::otf2
