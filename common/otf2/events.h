// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// An archive's events as it wrote them, one record kind per EventKind with its fields kept, so
// that a converter can write them again and an analyzer can decode what it needs.
#include <otf2/otf2.h>

#include <cstdint>
#include <exception>
#include <vector>

#include "common/otf2/definitions.h"

namespace ezio::otf2 {

struct Attribute {
  Ref id;
  OTF2_Type type;
  OTF2_AttributeValue value;
};

// Appends the list's attributes (none for nullptr) to out; returns how many could not be read,
// which a tolerant reader skips and a writer copying its own list treats as an error. Inline: the
// reader runs it for every event. With take, the list is emptied as it is read: OTF2 keeps it
// linked, so reading by index walks it from its head each time, while taking the head does not
// (for a reader's callback: OTF2 empties its list after the callback anyway).
inline uint32_t append_attributes(OTF2_AttributeList* attrs, std::vector<Attribute>& out,
                                  bool take = false) {
  const uint32_t n = attrs ? OTF2_AttributeList_GetNumberOfElements(attrs) : 0;
  const size_t first = out.size();
  out.resize(first + n);  // filled in place: push_back per attribute cost the reader ~5 %
  Attribute* kept = out.data() + first;
  for (uint32_t i = 0; i < n; ++i) {
    Attribute& a = *kept;
    const OTF2_ErrorCode rc =
        take ? OTF2_AttributeList_PopAttribute(attrs, &a.id, &a.type, &a.value)
             : OTF2_AttributeList_GetAttributeByIndex(attrs, i, &a.id, &a.type, &a.value);
    if (rc == OTF2_SUCCESS) ++kept;
  }
  const auto unread = static_cast<uint32_t>(out.data() + out.size() - kept);
  out.resize(out.size() - unread);
  return unread;
}

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
// I/O events: their ref is an IoHandle (IoDeleteFile: an IoParadigm). Inline: the merge asks
// for every event.
inline bool is_io_event(EventKind k) {
  return k >= EventKind::IoCreateHandle && k <= EventKind::IoOperationCancelled;
}
// MPI events: those with a communicator have it in ref.
inline bool is_mpi_event(EventKind k) { return k >= EventKind::MpiSend; }

// One event; the meaning of the generic fields depends on kind (see events.cpp, which fills them,
// and converters/merge/definition_mapper.cpp, which writes them back).
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

// Receives the events of an archive, location by location, each location's in file order.
class EventVisitor {
 public:
  virtual ~EventVisitor() = default;
  virtual void begin_location(OTF2_LocationRef) {}
  virtual void event(OTF2_LocationRef, const Event&) = 0;
  virtual void end_location(OTF2_LocationRef) {}
};

// The user data of the event callbacks: each record is decoded into `event` and handed to
// `visitor`. An exception thrown by the visitor must not unwind through OTF2's C code: it is
// parked in `error` and the reading is interrupted, for the reader to rethrow it.
struct EventCursor {
  EventVisitor* visitor = nullptr;
  OTF2_LocationRef location = 0;
  Event event{};
  uint64_t delivered = 0;  // events handed to the visitor, for counting the records skipped
  std::exception_ptr error;
};

// Sets a callback for every record kind of EventKind; OTF2 skips the others.
void set_event_callbacks(OTF2_EvtReaderCallbacks* callbacks);

}  // namespace ezio::otf2
