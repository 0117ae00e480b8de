// SPDX-License-Identifier: GPL-2.0-only
// `eziotrace datasets TRACE`: analysis/analyzers/datasets.h.
#include "analysis/analyzers/datasets.h"

#include "analysis/analyzers/trace_run.h"
#include "app/analysis_options.h"
#include "app/analyzers.h"
#include "common/command.h"

namespace ezio::app {

void add_datasets_command(CLI::App& app) {
  auto o = std::make_shared<analysis::DatasetsOptions>();
  auto* cmd = app.add_subcommand(
      "datasets", "HDF5 datasets: their transfers, and what reached the layers below them");
  add_common_options(*cmd, o->common);
  add_filter_options(*cmd, o->common.filters, false);
  cmd->callback([o] {
    analysis::emit(analysis::run_datasets(*o), o->common.format());
    command_status() = 0;
  });
}

}  // namespace ezio::app
