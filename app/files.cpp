// SPDX-License-Identifier: GPL-2.0-only
// `eziotrace files TRACE`: analysis/analyzers/files.h.
#include "analysis/analyzers/files.h"

#include "analysis/analyzers/trace_run.h"
#include "app/analysis_options.h"
#include "app/analyzers.h"
#include "common/command.h"

namespace ezio::app {

void add_files_command(CLI::App& app) {
  auto o = std::make_shared<analysis::FilesOptions>();
  auto* cmd = app.add_subcommand("files", "per-file I/O at every layer (Darshan-like)");
  add_common_options(*cmd, o->common);
  add_filter_options(*cmd, o->common.filters, false);
  cmd->add_option("--file", o->files, "only files whose path contains this text (repeatable)")
      ->allow_extra_args(false);
  cmd->callback([o] {
    analysis::emit(analysis::run_files(*o), o->common.format());
    command_status() = 0;
  });
}

}  // namespace ezio::app
