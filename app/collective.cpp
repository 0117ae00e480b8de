// SPDX-License-Identifier: GPL-2.0-only
// `eziotrace collective TRACE`: analysis/analyzers/collective.h.
#include "analysis/analyzers/collective.h"

#include "analysis/analyzers/trace_run.h"
#include "app/analysis_options.h"
#include "app/analyzers.h"
#include "common/command.h"

namespace ezio::app {

void add_collective_command(CLI::App& app) {
  auto o = std::make_shared<analysis::CollectiveOptions>();
  auto* cmd = app.add_subcommand(
      "collective", "collective MPI-IO calls: what each rank asked, whose calls moved the data");
  add_common_options(*cmd, o->common);
  add_filter_options(*cmd, o->common.filters, false);
  cmd->callback([o] {
    analysis::emit(analysis::run_collective(*o), o->common.format());
    command_status() = 0;
  });
}

}  // namespace ezio::app
