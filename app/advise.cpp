// SPDX-License-Identifier: GPL-2.0-only
// `eziotrace advise TRACE`: analysis/analyzers/advise.h.
#include "analysis/analyzers/advise.h"

#include "app/analyzers.h"
#include "common/command.h"

namespace ezio::app {

void add_advise_command(CLI::App& app) {
  auto o = std::make_shared<analysis::AdviseOptions>();
  auto* cmd = app.add_subcommand("advise", "findings: what to change, from kernel evidence");
  cmd->add_option("TRACE", o->trace, "OTF2 archive: the .otf2 anchor file or its directory")
      ->required();
  cmd->add_flag("--json", o->json, "machine-readable JSON on stdout");
  cmd->add_flag("--all", o->all,
                "the MPI launcher's and start-up I/O too (default: left out, as infrastructure)");
  cmd->add_option("--config", o->config, "JSON file of thresholds to override (docs/analysis.md)");
  cmd->callback([o] {
    analysis::advise_command(*o);
    command_status() = 0;
  });
}

}  // namespace ezio::app
