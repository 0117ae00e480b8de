#include "converters/merge/event_pipe.h"

#include "common/otf2/check.h"

namespace ezio::converters {
namespace {

using otf2::Event;
using otf2::EventKind;

// Events per batch: large enough that handing one over costs little per event, small enough
// that the two batches' events stay in the caches.
constexpr size_t kBatch = 4096;

OTF2_ErrorCode encode_mpi(OTF2_EvtWriter* w, OTF2_AttributeList* a, const Event& e, uint64_t t) {
  switch (e.kind) {
    // Peer ranks and roots are ranks of the communicator: valid as they are (see comm_mapper.h).
    case EventKind::MpiSend:
      return OTF2_EvtWriter_MpiSend(w, a, t, e.f1, e.ref, e.f2, e.a);
    case EventKind::MpiIsend:
      return OTF2_EvtWriter_MpiIsend(w, a, t, e.f1, e.ref, e.f2, e.a, e.b);
    case EventKind::MpiIsendComplete:
      return OTF2_EvtWriter_MpiIsendComplete(w, a, t, e.b);
    case EventKind::MpiIrecvRequest:
      return OTF2_EvtWriter_MpiIrecvRequest(w, a, t, e.b);
    case EventKind::MpiRecv:
      return OTF2_EvtWriter_MpiRecv(w, a, t, e.f1, e.ref, e.f2, e.a);
    case EventKind::MpiIrecv:
      return OTF2_EvtWriter_MpiIrecv(w, a, t, e.f1, e.ref, e.f2, e.a, e.b);
    case EventKind::MpiRequestTest:
      return OTF2_EvtWriter_MpiRequestTest(w, a, t, e.b);
    case EventKind::MpiRequestCancelled:
      return OTF2_EvtWriter_MpiRequestCancelled(w, a, t, e.b);
    case EventKind::MpiCollectiveBegin:
      return OTF2_EvtWriter_MpiCollectiveBegin(w, a, t);
    case EventKind::MpiCollectiveEnd:
      return OTF2_EvtWriter_MpiCollectiveEnd(w, a, t, static_cast<OTF2_CollectiveOp>(e.f1), e.ref,
                                             e.f2, e.a, e.b);
    default:
      return OTF2_SUCCESS;  // not an MPI event: encode_event has them all
  }
}

OTF2_AttributeList* fill(OTF2_AttributeList* list, const std::vector<otf2::Attribute>& attrs) {
  if (attrs.empty()) return nullptr;
  for (const otf2::Attribute& a : attrs) {
    OTF2_AttributeList_AddAttribute(list, a.id, a.type, a.value);
  }
  return list;
}

}  // namespace

void encode_event(OTF2_EvtWriter* w, OTF2_AttributeList* list, const Event& e, uint64_t t) {
  OTF2_AttributeList* a = fill(list, e.attributes);
  OTF2_ErrorCode rc = OTF2_SUCCESS;
  switch (e.kind) {
    case EventKind::Enter:
      rc = OTF2_EvtWriter_Enter(w, a, t, e.ref);
      break;
    case EventKind::Leave:
      rc = OTF2_EvtWriter_Leave(w, a, t, e.ref);
      break;
    case EventKind::ThreadBegin:
      rc = OTF2_EvtWriter_ThreadBegin(w, a, t, e.ref, e.a);
      break;
    case EventKind::ThreadEnd:
      rc = OTF2_EvtWriter_ThreadEnd(w, a, t, e.ref, e.a);
      break;
    case EventKind::IoCreateHandle:
      rc = OTF2_EvtWriter_IoCreateHandle(w, a, t, e.ref, e.f1, e.f2, e.f3);
      break;
    case EventKind::IoDestroyHandle:
      rc = OTF2_EvtWriter_IoDestroyHandle(w, a, t, e.ref);
      break;
    case EventKind::IoDuplicateHandle:
      rc = OTF2_EvtWriter_IoDuplicateHandle(w, a, t, e.ref, e.ref2, e.f1);
      break;
    case EventKind::IoSeek:
      rc = OTF2_EvtWriter_IoSeek(w, a, t, e.ref, static_cast<int64_t>(e.a),
                                 static_cast<OTF2_IoSeekOption>(e.f1), e.b);
      break;
    case EventKind::IoChangeStatusFlags:
      rc = OTF2_EvtWriter_IoChangeStatusFlags(w, a, t, e.ref, e.f1);
      break;
    case EventKind::IoDeleteFile:
      rc = OTF2_EvtWriter_IoDeleteFile(w, a, t, e.ref, e.ref2);
      break;
    case EventKind::IoOperationBegin:
      rc = OTF2_EvtWriter_IoOperationBegin(w, a, t, e.ref, static_cast<OTF2_IoOperationMode>(e.f1),
                                           e.f2, e.a, e.b);
      break;
    case EventKind::IoOperationTest:
      rc = OTF2_EvtWriter_IoOperationTest(w, a, t, e.ref, e.b);
      break;
    case EventKind::IoOperationIssued:
      rc = OTF2_EvtWriter_IoOperationIssued(w, a, t, e.ref, e.b);
      break;
    case EventKind::IoOperationComplete:
      rc = OTF2_EvtWriter_IoOperationComplete(w, a, t, e.ref, e.a, e.b);
      break;
    case EventKind::IoOperationCancelled:
      rc = OTF2_EvtWriter_IoOperationCancelled(w, a, t, e.ref, e.b);
      break;
    case EventKind::Metric:
      rc = OTF2_EvtWriter_Metric(w, a, t, e.ref, static_cast<uint8_t>(e.metric_types.size()),
                                 e.metric_types.data(), e.metric_values.data());
      break;
    default:
      rc = encode_mpi(w, a, e, t);
      break;
  }
  // After a failed flush (a full disk) OTF2 must not be given this writer's events again.
  otf2::written(rc);
}

EventPipe::EventPipe(otf2::ArchiveWriter& w, bool threaded) : w_(w) {
  if (threaded) thread_ = std::thread([this] { run(); });
}

EventPipe::~EventPipe() { stop(); }

EventPipe::Item& EventPipe::next_item() {
  if (filling_.size == kBatch) hand_over();
  if (filling_.size == filling_.items.size()) filling_.items.emplace_back();
  return filling_.items[filling_.size++];
}

otf2::Event& EventPipe::add(OTF2_LocationRef loc, uint64_t t) {
  Item& item = next_item();
  item.loc = loc;
  item.t = t;
  item.finish = false;
  return item.e;
}

void EventPipe::finish(OTF2_LocationRef loc) {
  Item& item = next_item();
  item.loc = loc;
  item.finish = true;
}

// The filled batch to the encoder, once it has encoded the one before.
void EventPipe::hand_over() {
  if (!thread_.joinable()) {
    encode(filling_);
    return;
  }
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return !full_; });
  if (error_) std::rethrow_exception(error_);
  std::swap(filling_, encoding_);
  filling_.size = 0;
  full_ = true;
  changed_.notify_all();
}

void EventPipe::encode(Batch& b) {
  for (size_t i = 0; i < b.size; ++i) {
    const Item& item = b.items[i];
    if (item.finish) {
      if (item.loc == loc_) writer_ = nullptr;
      w_.finish_events(item.loc);
      continue;
    }
    if (!writer_ || item.loc != loc_) {
      writer_ = w_.events(item.loc);
      loc_ = item.loc;
    }
    encode_event(writer_, w_.attributes(), item.e, item.t);
  }
  b.size = 0;
}

void EventPipe::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [this] { return full_ || stop_; });
    if (!full_) return;  // stopped, nothing left
    lock.unlock();
    std::exception_ptr error;
    try {
      encode(encoding_);
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    if (error) error_ = error;
    full_ = false;
    changed_.notify_all();
    if (error_) return;
  }
}

void EventPipe::stop() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void EventPipe::close() {
  if (filling_.size) hand_over();
  stop();  // the encoder writes the batch handed over before it stops
  if (error_) std::rethrow_exception(error_);
}

void EventPipe::rethrow_first() {
  stop();
  if (error_) std::rethrow_exception(error_);
  throw;
}

}  // namespace ezio::converters
