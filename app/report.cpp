// SPDX-License-Identifier: GPL-2.0-only
// `eziotrace report TRACE`: analysis/report/report_html.h.
#include "analysis/report/report_html.h"
#include "app/analyzers.h"
#include "common/command.h"

namespace ezio::app {

void add_report_command(CLI::App& app) {
  auto o = std::make_shared<analysis::ReportOptions>();
  auto* cmd = app.add_subcommand("report",
                                 "one self-contained HTML page: layers, timeline, "
                                 "latency, files, threads, findings");
  cmd->add_option("TRACE", o->trace, "OTF2 archive: the .otf2 anchor file or its directory")
      ->required();
  cmd->add_option("-o,--output", o->output, "the HTML file to write (default report.html)");
  cmd->add_option("--config", o->config, "JSON file of advise thresholds (docs/analysis.md)");
  cmd->add_flag("-f,--force", o->force, "replace the output file if it exists");
  cmd->add_flag("--all", o->all,
                "the MPI launcher's and start-up I/O too (default: left out, as infrastructure)");
  cmd->callback([o] {
    analysis::report_command(*o);
    command_status() = 0;
  });
}

}  // namespace ezio::app
