// SPDX-License-Identifier: GPL-2.0-only
// `eziotrace export TRACE -o FILE`: converters/timeline/export_command.h.
#include "app/commands.h"
#include "app/timeline_options.h"

namespace ezio::app {

void add_export_command(CLI::App& app) {
  auto o = std::make_shared<converters::ExportOptions>();
  CLI::App* cmd = app.add_subcommand(
      "export", "Write the layered timeline for a viewer: Pajé (ViTE) or Chrome JSON (Perfetto)");
  add_timeline_selection_options(*cmd, *o);
  cmd->add_option("--format", o->format, "paje (ViTE) or perfetto (Chrome Trace Event JSON)")
      ->check(CLI::IsMember({"paje", "perfetto"}));
  cmd->add_option("-o,--output", o->out, "output file")->required();
  cmd->add_flag("-f,--force", o->force, "replace an export eziotrace wrote earlier at that path");
  cmd->callback([o] { converters::export_command(*o); });
}

}  // namespace ezio::app
