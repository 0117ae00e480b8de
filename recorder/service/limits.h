// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// What one user may hold in the service at once: sessions, and ring buffer memory (locked kernel
// memory the user does not pay for otherwise).
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>

namespace ezio::recorder::service {

struct Limits {
  unsigned sessions_per_user = 4;
  uint64_t ring_bytes_per_user = 256ull << 20;
  uint64_t max_ring_bytes = 1ull << 30;  // one session's ring buffer
  unsigned connections = 256;            // all users together, sessions or not
  unsigned connections_per_user = 16;    // root excepted: one user cannot take them all
};

class Quota {
 public:
  explicit Quota(const Limits& limits) : limits_(limits) {}
  // Empty when uid may open one more session with a ring of ring_bytes (then counted against it);
  // otherwise the refusal, for the user to read.
  std::string admit(uid_t uid, uint64_t ring_bytes);
  void release(uid_t uid, uint64_t ring_bytes);
  unsigned sessions(uid_t uid) const;
  unsigned sessions() const;

 private:
  struct Use {
    unsigned sessions = 0;
    uint64_t ring_bytes = 0;
  };
  Limits limits_;
  std::map<uid_t, Use> use_;
};

}  // namespace ezio::recorder::service
