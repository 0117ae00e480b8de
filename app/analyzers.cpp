// SPDX-License-Identifier: GPL-2.0-only
#include "app/analyzers.h"

namespace ezio::app {

void add_analyzer_commands(CLI::App& app) {
  add_profile_command(app);
  add_layers_command(app);
  add_files_command(app);
  add_latency_command(app);
  add_collective_command(app);
  add_datasets_command(app);
  add_advise_command(app);
  add_report_command(app);
  add_check_command(app);
}

}  // namespace ezio::app
