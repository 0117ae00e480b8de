// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/core/recording_info.h"

#include <time.h>

#include "common/schema/layers.h"

namespace ezio::recorder {

static_assert(schema::kKernelLayers.size() == EZIO_LAYER_COUNT, "one name per enum ezio_layer");

const char* layer_name(unsigned layer) { return schema::kernel_layer_name(layer).data(); }

static uint64_t clock_ns(clockid_t id) {
  timespec ts;
  clock_gettime(id, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000u + uint64_t(ts.tv_nsec);
}

uint64_t monotonic_ns() { return clock_ns(CLOCK_MONOTONIC); }
uint64_t realtime_ns() { return clock_ns(CLOCK_REALTIME); }

}  // namespace ezio::recorder
