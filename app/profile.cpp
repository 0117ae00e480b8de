// SPDX-License-Identifier: GPL-2.0-only
// `eziotrace profile TRACE`: analysis/analyzers/profile.h.
#include "analysis/analyzers/profile.h"

#include "analysis/analyzers/trace_run.h"
#include "app/analysis_options.h"
#include "app/analyzers.h"
#include "common/command.h"

namespace ezio::app {

void add_profile_command(CLI::App& app) {
  auto o = std::make_shared<analysis::ProfileOptions>();
  auto* cmd = app.add_subcommand("profile", "per-thread, per-region time profile with SCI");
  add_common_options(*cmd, o->common);
  add_filter_options(*cmd, o->common.filters, true);
  cmd->add_flag("--total", o->total_only, "only the all-threads table");
  cmd->callback([o] {
    analysis::emit(analysis::run_profile(*o), o->common.format());
    command_status() = 0;
  });
}

}  // namespace ezio::app
