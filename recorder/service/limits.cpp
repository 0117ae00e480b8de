// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/service/limits.h"

#include <fmt/format.h>

namespace ezio::recorder::service {

std::string Quota::admit(uid_t uid, uint64_t ring_bytes) {
  Use& u = use_[uid];
  if (ring_bytes > limits_.max_ring_bytes) {
    return fmt::format("a ring buffer of {} MiB is more than this service allows ({} MiB)",
                       ring_bytes >> 20, limits_.max_ring_bytes >> 20);
  }
  if (u.sessions >= limits_.sessions_per_user) {
    return fmt::format(
        "you have {} recordings running through this service already, its limit per user",
        u.sessions);
  }
  if (u.ring_bytes + ring_bytes > limits_.ring_bytes_per_user) {
    return fmt::format(
        "a ring buffer of {} MiB would bring your recordings to {} MiB of ring buffers, more than "
        "the {} MiB this service allows per user (a smaller --ring-buffer helps)",
        ring_bytes >> 20, (u.ring_bytes + ring_bytes) >> 20, limits_.ring_bytes_per_user >> 20);
  }
  ++u.sessions;
  u.ring_bytes += ring_bytes;
  return "";
}

void Quota::release(uid_t uid, uint64_t ring_bytes) {
  auto it = use_.find(uid);
  if (it == use_.end()) return;
  it->second.sessions -= it->second.sessions > 0;
  it->second.ring_bytes -= std::min(it->second.ring_bytes, ring_bytes);
  if (it->second.sessions == 0) use_.erase(it);
}

unsigned Quota::sessions(uid_t uid) const {
  auto it = use_.find(uid);
  return it == use_.end() ? 0 : it->second.sessions;
}

unsigned Quota::sessions() const {
  unsigned n = 0;
  for (const auto& [uid, u] : use_) n += u.sessions;
  return n;
}

}  // namespace ezio::recorder::service
