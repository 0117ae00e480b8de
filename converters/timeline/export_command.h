// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// `eziotrace export` and `eziotrace view` (their command line: app/export.cpp, app/view.cpp).
#include <cstdint>
#include <string>

namespace ezio::converters {

struct ExportOptions {
  std::string trace, out, format = "paje", window, layers;  // format: paje or perfetto
  uint64_t tid = 0;
  uint64_t max_events = 5'000'000;  // 0: no limit
  bool force = false;
};

// Writes the layered timeline of o.trace to o.out in o.format.
void export_command(const ExportOptions& o);
// Converts to a temporary Pajé file and runs ViTE on it; the command's status is ViTE's.
void view_command(ExportOptions o);

}  // namespace ezio::converters
