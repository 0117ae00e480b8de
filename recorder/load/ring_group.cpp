// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/load/ring_group.h"

#include <sys/epoll.h>

#include <array>
#include <cerrno>
#include <utility>

#include "common/error.h"
#include "recorder/core/recording_info.h"

namespace ezio::recorder {

RingGroup::RingGroup(std::vector<UniqueFd> rings, uint64_t ring_bytes, RecordSink& sink)
    : sink_(sink), epoll_(epoll_create1(EPOLL_CLOEXEC)) {
  if (rings.empty()) fail("a session without a ring buffer");
  if (!epoll_) fail("cannot create an epoll set: {}", errno_text(errno));
  for (auto& ring : rings) {
    readers_.push_back(std::make_unique<RingReader>(std::move(ring), ring_bytes, sink));
    wake_on(readers_.back()->fd());
  }
  // Every ring is known to the sink from the start: one not read yet holds its frontier at 0.
  for (size_t r = readers_.size(); r-- > 0;) sink_.from_ring(static_cast<unsigned>(r));
}

bool RingGroup::drain() {
  const size_t n = readers_.size();
  for (;;) {
    bool all_empty = true;
    for (size_t i = 0; i < n; ++i) {
      size_t r = (next_ + i) % n;
      sink_.from_ring(static_cast<unsigned>(r));
      // Read before the ring is: whatever was committed before it is read by this drain.
      uint64_t at = monotonic_ns();
      if (readers_[r]->drain(kTurnBytes)) {
        sink_.ring_emptied(static_cast<unsigned>(r), at);
      } else {
        all_empty = false;
      }
      if (sink_.full()) {
        next_ = r;
        return false;
      }
    }
    if (all_empty) return true;
  }
}

bool RingGroup::poll(int timeout_ms) {
  std::array<epoll_event, 8> ev{};
  if (epoll_wait(epoll_.get(), ev.data(), static_cast<int>(ev.size()), timeout_ms) < 0 &&
      errno != EINTR) {
    fail("waiting for records failed: {}", errno_text(errno));
  }
  return drain();
}

void RingGroup::wake_on(int fd) {
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = fd;
  if (epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &ev) != 0) {
    fail("cannot watch fd {}: {}", fd, errno_text(errno));
  }
}

void RingGroup::unwatch(int fd) {
  if (epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, fd, nullptr) != 0) {
    fail("cannot stop watching fd {}: {}", fd, errno_text(errno));
  }
}

}  // namespace ezio::recorder
