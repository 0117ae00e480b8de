// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The merge's writer of kernel spans among a thread's user events (interleave.cpp).
#include <functional>

#include "converters/merge/merger.h"

namespace ezio::converters::merge_stages {

// Writes kernel locations as their events are read again (read_kernel), without the spans
// the filter dropped, each with its thread's user events (set_user) in merged order, into out.
// Holds no events: each is written as it is read. Final, and writing through out directly: it
// runs for every event of the merge.
class SpanWriter final : public otf2::EventVisitor {
 public:
  SpanWriter(Merger& m, Output& out) : m_(m), out_(out) {}

  // The user events (times + t0 on CLOCK_MONOTONIC) of the next location read, if any, written
  // to location loc through map.
  void set_user(EventStore::Cursor* user, uint64_t t0, DefinitionMapper* map = nullptr,
                OTF2_LocationRef loc = 0) {
    user_ = user;
    t0_ = t0;
    pending_ = user ? user->next() : nullptr;
    user_map_ = map;
    user_loc_ = loc;
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
    if (writing_) {
      out_.write(out_.kmap, loc_, e, e.time);
      ++m_.report.kernel_events;
    }
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
    out_.write(*user_map_, user_loc_, *pending_, pending_->time + t0_);
    ++m_.report.user_events;
    pending_ = user_->next();
  }
  // The span summaries do not match what is read.
  [[noreturn]] void changed() const;

  Merger& m_;
  Output& out_;
  DefinitionMapper* user_map_ = nullptr;
  OTF2_LocationRef user_loc_ = 0;
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
