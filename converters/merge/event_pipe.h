#pragma once
// The writing pass on two threads (docs/merge.md, "After the application ends"): the merge maps
// each event on its thread (DefinitionMapper::map, which defines what the events use in the one
// order that numbers the definitions) and hands the mapped events over in batches; OTF2's
// encoding and buffer flushes run on a thread of their own. Only that thread calls OTF2 while
// the pipe is open, so the archive needs no locking callbacks.
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "common/otf2/writer.h"

namespace ezio::converters {

// Writes a mapped event (its references already the merged archive's) on w at time t; list is
// the writer's reusable attribute list.
void encode_event(OTF2_EvtWriter* w, OTF2_AttributeList* list, const otf2::Event& e, uint64_t t);

class EventPipe {
 public:
  // threaded false (small merges, where a thread start would not pay): each batch is encoded on
  // the caller's thread.
  EventPipe(otf2::ArchiveWriter& w, bool threaded);
  ~EventPipe();
  EventPipe(const EventPipe&) = delete;
  EventPipe& operator=(const EventPipe&) = delete;

  // The slot of loc's next event, at time t: the caller fills it with the mapped event.
  otf2::Event& add(OTF2_LocationRef loc, uint64_t t);
  // loc's events are written out (ArchiveWriter::finish_events) after those added before.
  void finish(OTF2_LocationRef loc);
  // Writes what is left and ends the thread; rethrows the encoder's error.
  void close();
  // For a catch block of the writing pass: ends the thread, then rethrows the encoder's error if
  // it had one (the first: its events came before), else the exception being handled.
  [[noreturn]] void rethrow_first();

 private:
  struct Item {
    OTF2_LocationRef loc = 0;
    uint64_t t = 0;
    bool finish = false;
    otf2::Event e{};
  };
  struct Batch {
    std::vector<Item> items;
    size_t size = 0;
  };
  Item& next_item();
  void hand_over();
  void encode(Batch& b);
  void run();
  void stop();

  otf2::ArchiveWriter& w_;
  Batch filling_, encoding_;
  std::mutex mutex_;
  std::condition_variable changed_;
  bool full_ = false;  // encoding_ holds a batch not encoded yet
  bool stop_ = false;
  std::exception_ptr error_;  // the encoder's, which then encodes nothing more
  // The encoder's location at hand.
  OTF2_LocationRef loc_ = 0;
  OTF2_EvtWriter* writer_ = nullptr;
  std::thread thread_;  // last: started once the rest is ready
};

}  // namespace ezio::converters
