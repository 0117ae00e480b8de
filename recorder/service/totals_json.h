// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// A session's totals (what the kernel tables hold at its end) as the TOTALS message carries them.
#include <array>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

#include "record.h"
#include "recorder/core/device_use.h"

namespace ezio::recorder::service {

struct Totals {
  std::array<uint64_t, EZIO_LAYER_COUNT> lost{};
  DeviceUse devices;
  std::map<uint32_t, ezio_reclaimed> reclaimed;
  std::vector<uint64_t> lost_per_cpu;  // every layer's drops, per CPU they were counted on
};

nlohmann::json totals_to_json(const Totals& t);
// Fails (ezio::Error) on a body that is not such totals.
Totals totals_from_json(const nlohmann::json& j);

}  // namespace ezio::recorder::service
