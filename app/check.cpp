// SPDX-License-Identifier: GPL-2.0-only
// `eziotrace check TRACE`: analysis/analyzers/check.h.
#include "analysis/analyzers/check.h"

#include "analysis/analyzers/trace_run.h"
#include "app/analysis_options.h"
#include "app/analyzers.h"
#include "common/command.h"

namespace ezio::app {

void add_check_command(CLI::App& app) {
  auto o = std::make_shared<analysis::CommonOptions>();
  auto* cmd = app.add_subcommand(
      "check",
      "is the archive's time consistent: nesting per host, MPI messages received before sent per "
      "pair of hosts, each host's clock error");
  add_common_options(*cmd, *o);
  cmd->footer("Exit status 3: violations found.");
  cmd->callback([o] {
    analysis::CheckResult r = analysis::check_archive(o->trace);
    analysis::emit(analysis::check_report(r), o->format());
    command_status() = r.violations() ? 3 : 0;
  });
}

}  // namespace ezio::app
