// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// A probe plan as JSON, so that what probing found can be kept between recordings
// (recorder/probe/kernel_cache.h).
#include <nlohmann/json.hpp>
#include <optional>

#include "recorder/probe/probe.h"

namespace ezio::recorder {

nlohmann::json plan_to_json(const ProbePlan& plan);
// nullopt when the text is not a plan of this format (an older eziotrace's, or damaged).
std::optional<ProbePlan> plan_from_json(const nlohmann::json& j);

}  // namespace ezio::recorder
