// SPDX-License-Identifier: GPL-2.0-only
// `eziotrace layers TRACE`: analysis/analyzers/layers.h.
#include "analysis/analyzers/layers.h"

#include "analysis/analyzers/trace_run.h"
#include "app/analysis_options.h"
#include "app/analyzers.h"
#include "common/command.h"

namespace ezio::app {

void add_layers_command(CLI::App& app) {
  using analysis::GroupBy;
  auto o = std::make_shared<analysis::LayersOptions>();
  auto* cmd = app.add_subcommand("layers", "I/O per layer: counts, bytes, time, latency");
  add_common_options(*cmd, o->common);
  add_filter_options(*cmd, o->common.filters, true);
  auto* by_file = cmd->add_flag_callback(
      "--by-file", [o] { o->group = GroupBy::kFile; }, "one row per file and layer");
  auto* by_thread = cmd->add_flag_callback(
      "--by-thread", [o] { o->group = GroupBy::kThread; }, "one row per thread and layer");
  auto* by_process = cmd->add_flag_callback(
      "--by-process", [o] { o->group = GroupBy::kProcess; }, "one row per process and layer");
  auto* by_host = cmd->add_flag_callback(
      "--by-host", [o] { o->group = GroupBy::kHost; },
      "one row per host and layer (archives of several hosts: merge-hosts)");
  by_file->excludes(by_thread)->excludes(by_process)->excludes(by_host);
  by_thread->excludes(by_process)->excludes(by_host);
  by_process->excludes(by_host);
  cmd->callback([o] {
    analysis::emit(analysis::run_layers(*o), o->common.format());
    command_status() = 0;
  });
}

}  // namespace ezio::app
