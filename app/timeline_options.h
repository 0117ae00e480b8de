// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The options `export` and `view` share: which archive, and which part of it to draw.
#include <CLI/CLI.hpp>

#include "converters/timeline/export_command.h"

namespace ezio::app {

// Adds TRACE, --window, --thread, --layers and --max-events.
void add_timeline_selection_options(CLI::App& cmd, converters::ExportOptions& o);

}  // namespace ezio::app
