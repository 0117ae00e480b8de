// SPDX-License-Identifier: GPL-2.0-only
#include "common/otf2/events.h"

#include <iterator>

namespace ezio::otf2 {

const char* event_kind_name(EventKind k) {
  // In the order of EventKind, named as otf2-print names the records.
  static constexpr const char* kNames[] = {
      "ENTER",
      "LEAVE",
      "THREAD_BEGIN",
      "THREAD_END",
      "IO_CREATE_HANDLE",
      "IO_DESTROY_HANDLE",
      "IO_DUPLICATE_HANDLE",
      "IO_SEEK",
      "IO_CHANGE_STATUS_FLAGS",
      "IO_DELETE_FILE",
      "IO_OPERATION_BEGIN",
      "IO_OPERATION_TEST",
      "IO_OPERATION_ISSUED",
      "IO_OPERATION_COMPLETE",
      "IO_OPERATION_CANCELLED",
      "METRIC",
      "MPI_SEND",
      "MPI_ISEND",
      "MPI_ISEND_COMPLETE",
      "MPI_IRECV_REQUEST",
      "MPI_RECV",
      "MPI_IRECV",
      "MPI_REQUEST_TEST",
      "MPI_REQUEST_CANCELLED",
      "MPI_COLLECTIVE_BEGIN",
      "MPI_COLLECTIVE_END",
  };
  static_assert(std::size(kNames) == static_cast<size_t>(EventKind::MpiCollectiveEnd) + 1);
  auto i = static_cast<size_t>(k);
  return i < std::size(kNames) ? kNames[i] : "?";
}

namespace {

EventCursor& cursor(void* p) { return *static_cast<EventCursor*>(p); }

// Where a record's own fields go in Event (events.h); what a record does not have stays 0.
struct Fields {
  Ref ref = 0, ref2 = 0;
  uint64_t a = 0, b = 0;
  uint32_t f1 = 0, f2 = 0, f3 = 0;
};

// start, deliver and put run for every event read: inlined into each callback, they cost an
// analyzer a few percent less time.

// Makes the cursor's event a record of this kind with these fields and its attributes; the event
// is reused so that reading allocates nothing once warm.
[[gnu::always_inline]] inline Event& start(void* u, OTF2_LocationRef loc, OTF2_TimeStamp t,
                                           OTF2_AttributeList* attrs, EventKind kind,
                                           const Fields& f) {
  EventCursor& c = cursor(u);
  c.location = loc;
  Event& e = c.event;
  e.kind = kind;
  e.time = t;
  e.ref = f.ref;
  e.ref2 = f.ref2;
  e.a = f.a;
  e.b = f.b;
  e.f1 = f.f1;
  e.f2 = f.f2;
  e.f3 = f.f3;
  e.attributes.clear();
  e.metric_types.clear();
  e.metric_values.clear();
  append_attributes(attrs, e.attributes, true);  // an unreadable attribute is skipped
  return e;
}

[[gnu::always_inline]] inline OTF2_CallbackCode deliver(void* u) {
  EventCursor& c = cursor(u);
  try {
    c.visitor->event(c.location, c.event);
    ++c.delivered;
    return OTF2_CALLBACK_SUCCESS;
  } catch (...) {
    c.error = std::current_exception();
    return OTF2_CALLBACK_INTERRUPT;
  }
}

[[gnu::always_inline]] inline OTF2_CallbackCode put(void* u, OTF2_LocationRef loc, OTF2_TimeStamp t,
                                                    OTF2_AttributeList* attrs, EventKind kind,
                                                    const Fields& f) {
  start(u, loc, t, attrs, kind, f);
  return deliver(u);
}

// The arguments every event callback gets.
#define EZIO_EVT_ARGS \
  OTF2_LocationRef loc, OTF2_TimeStamp t, uint64_t, void *u, OTF2_AttributeList *attrs

// Records of several kinds with the same fields share a callback.

// A region (Enter, Leave) or a handle (IoDestroyHandle).
template <EventKind K>
OTF2_CallbackCode on_ref(EZIO_EVT_ARGS, uint32_t ref) {
  return put(u, loc, t, attrs, K, {.ref = ref});
}

template <EventKind K>
OTF2_CallbackCode on_thread(EZIO_EVT_ARGS, OTF2_CommRef comm, uint64_t sequence) {
  return put(u, loc, t, attrs, K, {.ref = comm, .a = sequence});
}

// Steps of an I/O operation, which its handle and matching id name.
template <EventKind K>
OTF2_CallbackCode on_io_step(EZIO_EVT_ARGS, OTF2_IoHandleRef h, uint64_t matching) {
  return put(u, loc, t, attrs, K, {.ref = h, .b = matching});
}

// Steps of a non-blocking MPI operation, which its request id names.
template <EventKind K>
OTF2_CallbackCode on_request(EZIO_EVT_ARGS, uint64_t request) {
  return put(u, loc, t, attrs, K, {.b = request});
}

// Point-to-point messages; the peer is the receiver or the sender.
template <EventKind K>
OTF2_CallbackCode on_message(EZIO_EVT_ARGS, uint32_t peer, OTF2_CommRef comm, uint32_t tag,
                             uint64_t length) {
  return put(u, loc, t, attrs, K, {.ref = comm, .a = length, .f1 = peer, .f2 = tag});
}

template <EventKind K>
OTF2_CallbackCode on_message_request(EZIO_EVT_ARGS, uint32_t peer, OTF2_CommRef comm, uint32_t tag,
                                     uint64_t length, uint64_t request) {
  return put(u, loc, t, attrs, K, {.ref = comm, .a = length, .b = request, .f1 = peer, .f2 = tag});
}

OTF2_CallbackCode on_io_create(EZIO_EVT_ARGS, OTF2_IoHandleRef h, OTF2_IoAccessMode mode,
                               OTF2_IoCreationFlag creation, OTF2_IoStatusFlag status) {
  return put(u, loc, t, attrs, EventKind::IoCreateHandle,
             {.ref = h, .f1 = mode, .f2 = creation, .f3 = status});
}

OTF2_CallbackCode on_io_duplicate(EZIO_EVT_ARGS, OTF2_IoHandleRef old_h, OTF2_IoHandleRef new_h,
                                  OTF2_IoStatusFlag status) {
  return put(u, loc, t, attrs, EventKind::IoDuplicateHandle,
             {.ref = old_h, .ref2 = new_h, .f1 = status});
}

OTF2_CallbackCode on_io_seek(EZIO_EVT_ARGS, OTF2_IoHandleRef h, int64_t request,
                             OTF2_IoSeekOption whence, uint64_t result) {
  return put(u, loc, t, attrs, EventKind::IoSeek,
             {.ref = h, .a = static_cast<uint64_t>(request), .b = result, .f1 = whence});
}

OTF2_CallbackCode on_io_status(EZIO_EVT_ARGS, OTF2_IoHandleRef h, OTF2_IoStatusFlag status) {
  return put(u, loc, t, attrs, EventKind::IoChangeStatusFlags, {.ref = h, .f1 = status});
}

OTF2_CallbackCode on_io_delete(EZIO_EVT_ARGS, OTF2_IoParadigmRef paradigm, OTF2_IoFileRef file) {
  return put(u, loc, t, attrs, EventKind::IoDeleteFile, {.ref = paradigm, .ref2 = file});
}

OTF2_CallbackCode on_io_begin(EZIO_EVT_ARGS, OTF2_IoHandleRef h, OTF2_IoOperationMode mode,
                              OTF2_IoOperationFlag flags, uint64_t bytes, uint64_t matching) {
  return put(u, loc, t, attrs, EventKind::IoOperationBegin,
             {.ref = h, .a = bytes, .b = matching, .f1 = mode, .f2 = flags});
}

OTF2_CallbackCode on_io_complete(EZIO_EVT_ARGS, OTF2_IoHandleRef h, uint64_t bytes,
                                 uint64_t matching) {
  return put(u, loc, t, attrs, EventKind::IoOperationComplete,
             {.ref = h, .a = bytes, .b = matching});
}

OTF2_CallbackCode on_collective_begin(EZIO_EVT_ARGS) {
  return put(u, loc, t, attrs, EventKind::MpiCollectiveBegin, {});
}

OTF2_CallbackCode on_collective_end(EZIO_EVT_ARGS, OTF2_CollectiveOp op, OTF2_CommRef comm,
                                    uint32_t root, uint64_t sent, uint64_t received) {
  return put(u, loc, t, attrs, EventKind::MpiCollectiveEnd,
             {.ref = comm, .a = sent, .b = received, .f1 = op, .f2 = root});
}

OTF2_CallbackCode on_metric(EZIO_EVT_ARGS, OTF2_MetricRef metric, uint8_t n, const OTF2_Type* types,
                            const OTF2_MetricValue* values) {
  Event& e = start(u, loc, t, attrs, EventKind::Metric, {.ref = metric});
  if (types && values) {
    e.metric_types.assign(types, types + n);
    e.metric_values.assign(values, values + n);
  } else {  // keep the count, with values of 0, rather than crash on a damaged record
    e.metric_types.assign(n, OTF2_TYPE_UINT64);
    e.metric_values.assign(n, OTF2_MetricValue{});
  }
  return deliver(u);
}

#undef EZIO_EVT_ARGS

}  // namespace

void set_event_callbacks(OTF2_EvtReaderCallbacks* c) {
  using K = EventKind;
  OTF2_EvtReaderCallbacks_SetEnterCallback(c, on_ref<K::Enter>);
  OTF2_EvtReaderCallbacks_SetLeaveCallback(c, on_ref<K::Leave>);
  OTF2_EvtReaderCallbacks_SetThreadBeginCallback(c, on_thread<K::ThreadBegin>);
  OTF2_EvtReaderCallbacks_SetThreadEndCallback(c, on_thread<K::ThreadEnd>);
  OTF2_EvtReaderCallbacks_SetIoCreateHandleCallback(c, on_io_create);
  OTF2_EvtReaderCallbacks_SetIoDestroyHandleCallback(c, on_ref<K::IoDestroyHandle>);
  OTF2_EvtReaderCallbacks_SetIoDuplicateHandleCallback(c, on_io_duplicate);
  OTF2_EvtReaderCallbacks_SetIoSeekCallback(c, on_io_seek);
  OTF2_EvtReaderCallbacks_SetIoChangeStatusFlagsCallback(c, on_io_status);
  OTF2_EvtReaderCallbacks_SetIoDeleteFileCallback(c, on_io_delete);
  OTF2_EvtReaderCallbacks_SetIoOperationBeginCallback(c, on_io_begin);
  OTF2_EvtReaderCallbacks_SetIoOperationTestCallback(c, on_io_step<K::IoOperationTest>);
  OTF2_EvtReaderCallbacks_SetIoOperationIssuedCallback(c, on_io_step<K::IoOperationIssued>);
  OTF2_EvtReaderCallbacks_SetIoOperationCompleteCallback(c, on_io_complete);
  OTF2_EvtReaderCallbacks_SetIoOperationCancelledCallback(c, on_io_step<K::IoOperationCancelled>);
  OTF2_EvtReaderCallbacks_SetMetricCallback(c, on_metric);
  OTF2_EvtReaderCallbacks_SetMpiSendCallback(c, on_message<K::MpiSend>);
  OTF2_EvtReaderCallbacks_SetMpiIsendCallback(c, on_message_request<K::MpiIsend>);
  OTF2_EvtReaderCallbacks_SetMpiIsendCompleteCallback(c, on_request<K::MpiIsendComplete>);
  OTF2_EvtReaderCallbacks_SetMpiIrecvRequestCallback(c, on_request<K::MpiIrecvRequest>);
  OTF2_EvtReaderCallbacks_SetMpiRecvCallback(c, on_message<K::MpiRecv>);
  OTF2_EvtReaderCallbacks_SetMpiIrecvCallback(c, on_message_request<K::MpiIrecv>);
  OTF2_EvtReaderCallbacks_SetMpiRequestTestCallback(c, on_request<K::MpiRequestTest>);
  OTF2_EvtReaderCallbacks_SetMpiRequestCancelledCallback(c, on_request<K::MpiRequestCancelled>);
  OTF2_EvtReaderCallbacks_SetMpiCollectiveBeginCallback(c, on_collective_begin);
  OTF2_EvtReaderCallbacks_SetMpiCollectiveEndCallback(c, on_collective_end);
}

}  // namespace ezio::otf2
