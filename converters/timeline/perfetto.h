// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// `eziotrace export --format perfetto`: the layered timeline (timeline.h) as Chrome Trace Event
// JSON, which ui.perfetto.dev and chrome://tracing open. Written as the archive is read: memory
// does not grow with the trace (the JSON format needs no order between events).
#include <filesystem>
#include <string_view>

#include "converters/timeline/paje.h"
#include "converters/timeline/timeline.h"

namespace ezio::converters {

// How every JSON export eziotrace writes begins; --force replaces only such files.
inline constexpr std::string_view kPerfettoSignature = R"({"otherData":{"producer":"eziotrace")";

ExportCounts export_perfetto(Timeline& timeline, const std::filesystem::path& out, bool force);

}  // namespace ezio::converters
