// SPDX-License-Identifier: GPL-2.0-only
// `eziotrace latency TRACE`: analysis/analyzers/latency.h.
#include "analysis/analyzers/latency.h"

#include "analysis/analyzers/trace_run.h"
#include "app/analysis_options.h"
#include "app/analyzers.h"
#include "common/command.h"

namespace ezio::app {

void add_latency_command(CLI::App& app) {
  auto o = std::make_shared<analysis::LatencyOptions>();
  auto* cmd = app.add_subcommand("latency", "log2 latency histograms per layer and operation");
  add_common_options(*cmd, o->common);
  add_filter_options(*cmd, o->common.filters, true);
  cmd->add_option("--svg", o->svg, "also draw the histograms into this SVG file");
  cmd->callback([o] {
    analysis::emit(analysis::run_latency(*o), o->common.format());
    command_status() = 0;
  });
}

}  // namespace ezio::app
