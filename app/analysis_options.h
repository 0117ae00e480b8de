// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The options every analyzer subcommand shares (TRACE, --json/--csv, the filters), declared once.
#include <CLI/CLI.hpp>

#include "analysis/analyzers/options.h"

namespace ezio::app {

// Adds TRACE, --json, --csv (mutually exclusive) to a subcommand.
void add_common_options(CLI::App& cmd, analysis::CommonOptions& o);
// Adds --thread/--layer/--region.
void add_filter_options(CLI::App& cmd, analysis::Filters& f, bool with_region);

}  // namespace ezio::app
