// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// `eziotrace export --format paje`: the layered timeline (timeline.h) as a Pajé trace, the
// native format of ViTE (docs/timeline.md gives the container and type hierarchy).
#include <filesystem>

#include "converters/timeline/timeline.h"

namespace ezio::converters {

// A line of every Pajé file eziotrace writes (a container type never used: ViTE warns about
// comment lines); --force replaces only such files.
inline constexpr std::string_view kPajeSignature = "0 CT_Eziotrace 0 \"eziotrace Paje export\"";

struct ExportCounts {
  uint64_t states = 0, requests = 0, links = 0, lines = 0;
};

ExportCounts export_paje(Timeline& timeline, const std::filesystem::path& out, bool force);

}  // namespace ezio::converters
