#include "recorder/recording_info.h"

#include <time.h>

namespace ezio::recorder {

const char* layer_name(unsigned layer) {
  static const char* names[EZIO_LAYER_COUNT] = {"syscall",   "vfs",   "fs",
                                                "pagecache", "block", "process"};
  return layer < EZIO_LAYER_COUNT ? names[layer] : "unknown";
}

static uint64_t clock_ns(clockid_t id) {
  timespec ts;
  clock_gettime(id, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000u + uint64_t(ts.tv_nsec);
}

uint64_t monotonic_ns() { return clock_ns(CLOCK_MONOTONIC); }
uint64_t realtime_ns() { return clock_ns(CLOCK_REALTIME); }

}  // namespace ezio::recorder
