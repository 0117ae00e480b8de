// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The rings of one session (one per CPU, bpf/common.bpf.h, ring_entry; in-process or received from
// eziotraced) read by one thread, woken by any of them (one epoll set): the one way records are
// waited for and drained (RingReader only reads a ring). The rings are drained in turns of at most
// kTurnBytes each, so that all of them advance together: the store's frontier, the time before
// which every ring's records have arrived (RecordStore::newest), is the slowest ring's, and a ring
// left behind would hold back what the archive can write.
#include <cstdint>
#include <memory>
#include <vector>

#include "common/unique_fd.h"
#include "recorder/core/record_sink.h"
#include "recorder/load/ring_reader.h"

namespace ezio::recorder {

class RingGroup {
 public:
  // rings: each of ring_bytes; records go to sink, which is told which ring they come from and
  // when each ring was found empty (RecordSink::from_ring, ring_emptied).
  RingGroup(std::vector<UniqueFd> rings, uint64_t ring_bytes, RecordSink& sink);
  RingGroup(const RingGroup&) = delete;
  RingGroup& operator=(const RingGroup&) = delete;

  // What one ring hands over before the next one's turn.
  static constexpr uint64_t kTurnBytes = 256 * 1024;

  // Drains the rings in turns until every one was found empty in the same round (true) or the
  // sink is full (false: the rest waits in the rings; the next drain resumes at the ring that
  // stopped).
  bool drain();
  // Waits up to timeout_ms for a ring's wake-up or one of the wake_on fds, then drains.
  bool poll(int timeout_ms);
  void wake_on(int fd);
  // Stops watching an fd given to wake_on (an exited process's pidfd stays readable).
  void unwatch(int fd);
  size_t size() const { return readers_.size(); }

 private:
  std::vector<std::unique_ptr<RingReader>> readers_;
  RecordSink& sink_;
  UniqueFd epoll_;
  size_t next_ = 0;  // the ring whose turn comes first at the next drain
};

}  // namespace ezio::recorder
