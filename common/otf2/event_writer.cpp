// SPDX-License-Identifier: GPL-2.0-only
#include "common/otf2/event_writer.h"

#include "common/error.h"
#include "common/otf2/check.h"
#include "common/otf2/writer.h"

namespace ezio::otf2 {
namespace {

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

// The value as the attribute's type stores it (what the C conversion of OTF2's typed
// OTF2_AttributeList_Add* functions would give).
OTF2_AttributeValue integer_value(OTF2_Type t, uint64_t bits) {
  OTF2_AttributeValue v;
  switch (t) {
    case OTF2_TYPE_UINT8:
      v.uint8 = static_cast<uint8_t>(bits);
      break;
    case OTF2_TYPE_UINT16:
      v.uint16 = static_cast<uint16_t>(bits);
      break;
    case OTF2_TYPE_UINT32:
      v.uint32 = static_cast<uint32_t>(bits);
      break;
    case OTF2_TYPE_INT8:
      v.int8 = static_cast<int8_t>(bits);
      break;
    case OTF2_TYPE_INT16:
      v.int16 = static_cast<int16_t>(bits);
      break;
    case OTF2_TYPE_INT32:
      v.int32 = static_cast<int32_t>(bits);
      break;
    case OTF2_TYPE_INT64:
      v.int64 = static_cast<int64_t>(bits);
      break;
    default:
      v.uint64 = bits;
      break;
  }
  return v;
}

}  // namespace

EventAttributes::EventAttributes(ArchiveWriter& w)
    : w_(w),
      list_(w.attributes()),
      pending_(w.writes_events() ? nullptr : &w.pending_attributes()) {}

EventAttributes& EventAttributes::add_signed(TypedAttribute a, int64_t value) {
  return add_unsigned(a, static_cast<uint64_t>(value));
}

EventAttributes& EventAttributes::add_unsigned(TypedAttribute a, uint64_t value) {
  if (!is_integer(a.type)) fail("OTF2: attribute {} takes no integer value", a.ref);
  return add_value(a, integer_value(a.type, value));
}

EventAttributes& EventAttributes::add_string(TypedAttribute a, Ref string) {
  if (a.type != OTF2_TYPE_STRING) fail("OTF2: attribute {} takes no string value", a.ref);
  OTF2_AttributeValue v;
  v.stringRef = string;
  return add_value(a, v);
}

EventAttributes& EventAttributes::add_string(TypedAttribute a, std::string_view string) {
  return add_string(a, w_.string(string));
}

EventAttributes& EventAttributes::add_io_file(TypedAttribute a, Ref file) {
  if (a.type != OTF2_TYPE_IO_FILE) fail("OTF2: attribute {} takes no file", a.ref);
  OTF2_AttributeValue v;
  v.ioFileRef = file;
  return add_value(a, v);
}

EventAttributes& EventAttributes::add_value(TypedAttribute a, OTF2_AttributeValue value) {
  if (pending_) {
    pending_->push_back({a.ref, a.type, value});
    return *this;
  }
  check(OTF2_AttributeList_AddAttribute(list_, a.ref, a.type, value), "adding an attribute");
  return *this;
}

// Inline and small: every event asks, and most archives have no tap; the copy for the tap is a
// call of its own, so that the common path saves no registers for it.
inline Event* EventWriter::tapped(EventKind kind, uint64_t t, OTF2_AttributeList* attrs) const {
  if (!archive_->tap()) [[likely]]
    return nullptr;
  return tap_copy(kind, t, attrs);
}

Event* EventWriter::tap_copy(EventKind kind, uint64_t t, OTF2_AttributeList* attrs) const {
  Event& e = archive_->tap_event();
  e.kind = kind;
  e.time = t;
  e.ref = e.ref2 = 0;
  e.a = e.b = 0;
  e.f1 = e.f2 = e.f3 = 0;
  e.attributes.clear();
  e.metric_types.clear();
  e.metric_values.clear();
  if (!archive_->writes_events()) {
    // An event with attributes takes those added since the last one (a swap keeps both
    // vectors' room); one without leaves them to the event they were added for.
    if (attrs) std::swap(e.attributes, archive_->pending_attributes());
  } else if (uint32_t unread = append_attributes(attrs, e.attributes)) {
    fail("OTF2: {} attribute(s) of an event could not be read to copy them", unread);
  }
  return &e;
}

template <typename Write>
void EventWriter::put(const Event* e, Write write) const {
  if (w_) {
    written(write());
  } else {
    ++*tapped_only_;
  }
  if (e) archive_->tap()->event(location_, *e);
}

void EventWriter::enter(uint64_t t, Ref region) const {
  Event* e = tapped(EventKind::Enter, t, nullptr);
  if (e) e->ref = region;
  put(e, [&] { return OTF2_EvtWriter_Enter(w_, nullptr, t, region); });
}

void EventWriter::enter(uint64_t t, Ref region, const EventAttributes& attrs) const {
  Event* e = tapped(EventKind::Enter, t, attrs.list());
  if (e) e->ref = region;
  put(e, [&] { return OTF2_EvtWriter_Enter(w_, attrs.list(), t, region); });
}

void EventWriter::leave(uint64_t t, Ref region) const {
  Event* e = tapped(EventKind::Leave, t, nullptr);
  if (e) e->ref = region;
  put(e, [&] { return OTF2_EvtWriter_Leave(w_, nullptr, t, region); });
}

void EventWriter::io_create_handle(uint64_t t, Ref handle, OTF2_IoAccessMode mode,
                                   OTF2_IoCreationFlag creation, OTF2_IoStatusFlag status) const {
  Event* e = tapped(EventKind::IoCreateHandle, t, nullptr);
  if (e) {
    e->ref = handle;
    e->f1 = mode;
    e->f2 = creation;
    e->f3 = status;
  }
  put(e, [&] {
    return OTF2_EvtWriter_IoCreateHandle(w_, nullptr, t, handle, mode, creation, status);
  });
}

void EventWriter::io_destroy_handle(uint64_t t, Ref handle) const {
  Event* e = tapped(EventKind::IoDestroyHandle, t, nullptr);
  if (e) e->ref = handle;
  put(e, [&] { return OTF2_EvtWriter_IoDestroyHandle(w_, nullptr, t, handle); });
}

void EventWriter::io_duplicate_handle(uint64_t t, Ref old_handle, Ref new_handle,
                                      OTF2_IoStatusFlag status) const {
  Event* e = tapped(EventKind::IoDuplicateHandle, t, nullptr);
  if (e) {
    e->ref = old_handle;
    e->ref2 = new_handle;
    e->f1 = status;
  }
  put(e, [&] {
    return OTF2_EvtWriter_IoDuplicateHandle(w_, nullptr, t, old_handle, new_handle, status);
  });
}

void EventWriter::io_seek(uint64_t t, Ref handle, int64_t offset_request, OTF2_IoSeekOption whence,
                          uint64_t offset_result) const {
  Event* e = tapped(EventKind::IoSeek, t, nullptr);
  if (e) {
    e->ref = handle;
    e->a = static_cast<uint64_t>(offset_request);
    e->b = offset_result;
    e->f1 = whence;
  }
  put(e, [&] {
    return OTF2_EvtWriter_IoSeek(w_, nullptr, t, handle, offset_request, whence, offset_result);
  });
}

void EventWriter::io_begin(uint64_t t, Ref handle, OTF2_IoOperationMode mode,
                           OTF2_IoOperationFlag flags, uint64_t bytes_request, uint64_t matching_id,
                           OTF2_AttributeList* attrs) const {
  Event* e = tapped(EventKind::IoOperationBegin, t, attrs);
  if (e) {
    e->ref = handle;
    e->a = bytes_request;
    e->b = matching_id;
    e->f1 = mode;
    e->f2 = flags;
  }
  put(e, [&] {
    return OTF2_EvtWriter_IoOperationBegin(w_, attrs, t, handle, mode, flags, bytes_request,
                                           matching_id);
  });
}

void EventWriter::io_operation_begin(uint64_t t, Ref handle, OTF2_IoOperationMode mode,
                                     OTF2_IoOperationFlag flags, uint64_t bytes_request,
                                     uint64_t matching_id) const {
  io_begin(t, handle, mode, flags, bytes_request, matching_id, nullptr);
}

void EventWriter::io_operation_begin(uint64_t t, Ref handle, OTF2_IoOperationMode mode,
                                     OTF2_IoOperationFlag flags, uint64_t bytes_request,
                                     uint64_t matching_id, const EventAttributes& attrs) const {
  io_begin(t, handle, mode, flags, bytes_request, matching_id, attrs.list());
}

void EventWriter::io_operation_issued(uint64_t t, Ref handle, uint64_t matching_id) const {
  Event* e = tapped(EventKind::IoOperationIssued, t, nullptr);
  if (e) {
    e->ref = handle;
    e->b = matching_id;
  }
  put(e, [&] { return OTF2_EvtWriter_IoOperationIssued(w_, nullptr, t, handle, matching_id); });
}

void EventWriter::io_operation_complete(uint64_t t, Ref handle, uint64_t bytes,
                                        uint64_t matching_id) const {
  Event* e = tapped(EventKind::IoOperationComplete, t, nullptr);
  if (e) {
    e->ref = handle;
    e->a = bytes;
    e->b = matching_id;
  }
  put(e, [&] {
    return OTF2_EvtWriter_IoOperationComplete(w_, nullptr, t, handle, bytes, matching_id);
  });
}

void EventWriter::io_operation_cancelled(uint64_t t, Ref handle, uint64_t matching_id) const {
  Event* e = tapped(EventKind::IoOperationCancelled, t, nullptr);
  if (e) {
    e->ref = handle;
    e->b = matching_id;
  }
  put(e, [&] { return OTF2_EvtWriter_IoOperationCancelled(w_, nullptr, t, handle, matching_id); });
}

void EventWriter::write_metric(uint64_t t, Ref metric_class, uint64_t value,
                               OTF2_AttributeList* attrs) const {
  OTF2_Type type = OTF2_TYPE_UINT64;
  OTF2_MetricValue v;
  v.unsigned_int = value;
  Event* e = tapped(EventKind::Metric, t, attrs);
  if (e) {
    e->ref = metric_class;
    e->metric_types.push_back(type);
    e->metric_values.push_back(v);
  }
  put(e, [&] { return OTF2_EvtWriter_Metric(w_, attrs, t, metric_class, 1, &type, &v); });
}

void EventWriter::metric(uint64_t t, Ref metric_class, uint64_t value) const {
  write_metric(t, metric_class, value, nullptr);
}

void EventWriter::metric(uint64_t t, Ref metric_class, uint64_t value,
                         const EventAttributes& attrs) const {
  write_metric(t, metric_class, value, attrs.list());
}

}  // namespace ezio::otf2
