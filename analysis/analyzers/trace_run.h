// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Reading a trace for an analyzer: progress on stderr, warnings about losses and defects, and the
// "meta" object of the report (trace path, events read, losses, completeness).
#include "analysis/analyzers/options.h"
#include "analysis/analyzers/table.h"
#include "analysis/model/calls.h"
#include "analysis/model/trace_reader.h"

namespace ezio::analysis {

// Streams the selected locations of `reader` into `sink` and records what happened in report.meta.
void run_trace(TraceReader& reader, CallSink& sink, const Filters& filters, Report& report);

// Prints the report of a subcommand on stdout in the requested format.
void emit(const Report& report, Format format);

}  // namespace ezio::analysis
