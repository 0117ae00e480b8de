// SPDX-License-Identifier: GPL-2.0-only
// `eziotrace view TRACE`: converters/timeline/export_command.h.
#include "app/commands.h"
#include "app/timeline_options.h"

namespace ezio::app {

void add_view_command(CLI::App& app) {
  auto o = std::make_shared<converters::ExportOptions>();
  CLI::App* cmd = app.add_subcommand("view", "Open the layered timeline in ViTE");
  add_timeline_selection_options(*cmd, *o);
  cmd->callback([o] { converters::view_command(*o); });
}

}  // namespace ezio::app
