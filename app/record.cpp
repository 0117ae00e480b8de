// SPDX-License-Identifier: GPL-2.0-only
// `eziotrace record [options] [--] command [args...]`: converters/record_command.h.
#include "app/commands.h"
#include "app/options.h"
#include "common/error.h"
#include "converters/cluster/hydra_step.h"
#include "converters/cluster/launcher_hosts.h"
#include "converters/cluster/node_session.h"
#include "converters/cluster/orte_step.h"
#include "converters/cluster/slurm_step.h"
#include "converters/cluster/srun_line.h"
#include "converters/record_command.h"
#include "recorder/session/launcher.h"

namespace ezio::app {
namespace {

// What `eziotrace record` is told: the options it shares with `run`, and --eztrace-alignment.
struct RecordCommandArgs {
  RecordArgs shared;
  bool eztrace_alignment = false;
  std::string clock_ref;
};

}  // namespace

void add_record_command(CLI::App& app, const std::vector<std::string>& command) {
  auto o = std::make_shared<RecordCommandArgs>();
  CLI::App* cmd = app.add_subcommand(
      "record", "record the kernel I/O of a command and its children (no EZTrace)");
  add_record_options(*cmd, o->shared);
  cmd->add_flag("--eztrace-alignment", o->eztrace_alignment,
                "keep the alignment data of EZTrace-traced processes in the archive, for "
                "`eziotrace merge` (automatic when the command runs `eztrace` or preloads "
                "EZTrace)");
  cmd->add_option("--clock-ref", o->clock_ref,
                  "HOST[:PORT] running `eziotrace clock serve`: this host's clock offset to it, "
                  "measured at the start and at the end, kept in the archive directory");
  cmd->callback([o, &command] {
    apply_common(o->shared);
    if (command.empty())
      fail("no command given: eziotrace record [options] [--] command [args...]");
    o->shared.record.command = command;
    if (auto session = converters::take_node_session()) {  // a task of `eziotrace -- srun`
      converters::record_part(*session,
                              [&o](const std::filesystem::path& part, const std::string& ref) {
                                recorder::RecordOptions r = o->shared.record;
                                r.output = part;
                                converters::record_command({r, o->eztrace_alignment, ref});
                              });
    } else if (converters::is_srun(command)) {
      std::vector<std::string> task = task_options(o->shared);
      if (o->eztrace_alignment) task.push_back("--eztrace-alignment");
      converters::slurm_step_command({o->shared.record, "record", task, 30});
    } else if (converters::is_hydra_slurm(command, recorder::current_environment())) {
      std::vector<std::string> task = task_options(o->shared);
      if (o->eztrace_alignment) task.push_back("--eztrace-alignment");
      converters::hydra_step_command({o->shared.record, "record", task, 30});
    } else if (converters::is_orte_slurm(command, recorder::current_environment())) {
      std::vector<std::string> task = task_options(o->shared);
      if (o->eztrace_alignment) task.push_back("--eztrace-alignment");
      converters::orte_step_command({o->shared.record, "record", task, 30});
    } else {
      converters::refuse_launcher_across_hosts(command, recorder::current_environment());
      converters::record_command({o->shared.record, o->eztrace_alignment, o->clock_ref});
    }
  });
}

}  // namespace ezio::app
