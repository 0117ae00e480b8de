// SPDX-License-Identifier: GPL-2.0-only
// `eziotrace [options] [--] command [args...]` (`eziotrace run`): converters/run_command.h.
#include "app/commands.h"
#include "app/options.h"
#include "common/error.h"
#include "converters/cluster/hydra_step.h"
#include "converters/cluster/launcher_hosts.h"
#include "converters/cluster/node_session.h"
#include "converters/cluster/orte_step.h"
#include "converters/cluster/slurm_step.h"
#include "converters/cluster/srun_line.h"
#include "converters/cluster/user_layers.h"
#include "converters/run_command.h"
#include "recorder/session/launcher.h"

namespace ezio::app {

void add_run_command(CLI::App& app, const std::vector<std::string>& command) {
  auto o = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand(
      "run",
      "run a command under EZTrace and record its kernel I/O into one archive (the "
      "default: `eziotrace [options] command` means `eziotrace run [options] command`)");
  add_record_options(*cmd, o->base);
  cmd->add_option("-t,--eztrace", o->modules,
                  "EZTrace modules, as `eztrace -t` takes them (default: posixio)")
      ->delimiter(',');
  cmd->add_flag("--keep-parts", o->keep_parts,
                "also keep EZTrace's archive and the kernel archive");
  cmd->callback([o, &command] {
    apply_common(o->base);
    if (command.empty()) fail("no command given: eziotrace [options] [--] command [args...]");
    o->base.record.command = command;
    if (auto session = converters::take_node_session()) {  // a task of `eziotrace -- srun`
      converters::record_part(
          *session, [&o, &session](const std::filesystem::path& part, const std::string& ref) {
            recorder::RecordOptions r = o->base.record;
            r.output = part;
            converters::record_task_with_eztrace(r, o->modules,
                                                 session->parts / converters::kJobEztraceDir, ref);
          });
    } else if (converters::is_srun(command)) {
      std::vector<std::string> task = task_options(o->base);
      for (const auto& m : o->modules) task.insert(task.end(), {"-t", m});
      converters::slurm_step_command({o->base.record, "run", task, 30});
    } else if (converters::is_hydra_slurm(command, recorder::current_environment())) {
      converters::hydra_step_command(
          {o->base.record, "run", task_options(o->base), 30, o->modules});
    } else if (converters::is_orte_slurm(command, recorder::current_environment())) {
      converters::orte_step_command({o->base.record, "run", task_options(o->base), 30, o->modules});
    } else {
      converters::refuse_launcher_across_hosts(command, recorder::current_environment());
      converters::run_command({o->base.record, o->modules, o->keep_parts, ""});
    }
  });
}

}  // namespace ezio::app
