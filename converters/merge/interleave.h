#pragma once
// The merge's writer of kernel spans among a thread's user events (interleave.cpp).
#include <functional>

#include "converters/merge/merger.h"

namespace ezio::converters::merge_stages {

// Writes kernel locations as their events are read again (read_kernel), without the spans
// the filter dropped, each with its thread's user events (set_user) in merged order. Holds no
// events: each is written as it is read.
class SpanWriter : public otf2::EventVisitor {
 public:
  using WriteKernel = std::function<void(OTF2_LocationRef, const Event&)>;
  using WriteUser = std::function<void(const Event&, uint64_t time)>;
  SpanWriter(Merger& m, WriteKernel write_kernel) : m_(m), write_kernel_(std::move(write_kernel)) {}

  // The user events (times + t0 on CLOCK_MONOTONIC) of the next location read, if any.
  void set_user(EventStore::Cursor* user, uint64_t t0, WriteUser write_user) {
    user_ = user;
    t0_ = t0;
    pending_ = user ? user->next() : nullptr;
    write_user_ = std::move(write_user);
  }
  // Writes the user events after the last kernel span.
  void finish_user() {
    while (pending_) write_next_user();
  }

  void begin_location(OTF2_LocationRef loc) override {
    loc_ = loc;
    spans_ = &m_.kernel.locations.at(loc).spans;
    next_ = 0;
    cutter_ = SpanCutter();
    writing_ = false;
  }
  void event(OTF2_LocationRef, const Event& e) override {
    if (cutter_.complete()) start_span();  // e opens the next span
    if (writing_) write_kernel_(loc_, e);
    cutter_.add(e);
  }
  void end_location(OTF2_LocationRef loc) override {
    if (next_ != spans_->size()) changed();
    if (location_done_) location_done_(loc);
  }
  // Called after each location read (not for a thread's user events after its last span).
  void on_location_done(std::function<void(OTF2_LocationRef)> done) {
    location_done_ = std::move(done);
  }

 private:
  // A span's place among the user events depends on its start only: its events are written
  // as they are read (a span left open by a lost LEAVE may be long).
  void start_span() {
    if (next_ == spans_->size()) changed();
    const Span& s = spans_->get(next_++);
    writing_ = !s.dropped;
    if (writing_) {
      while (pending_ && !kernel_first(s, *pending_, pending_->time + t0_)) write_next_user();
    }
  }
  void write_next_user() {
    write_user_(*pending_, pending_->time + t0_);
    pending_ = user_->next();
  }
  // The span summaries do not match what is read.
  [[noreturn]] void changed() const;

  Merger& m_;
  WriteKernel write_kernel_;
  WriteUser write_user_;
  std::function<void(OTF2_LocationRef)> location_done_;
  EventStore::Cursor* user_ = nullptr;
  const Event* pending_ = nullptr;  // the next user event, not written yet
  uint64_t t0_ = 0;
  OTF2_LocationRef loc_ = 0;
  const SpanList* spans_ = nullptr;
  size_t next_ = 0;
  SpanCutter cutter_;
  bool writing_ = false;  // the current span is written (not dropped)
};

}  // namespace ezio::converters::merge_stages
