// SPDX-License-Identifier: GPL-2.0-only
#include "converters/cluster/hydra_step.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include "common/error.h"
#include "converters/cluster/launcher_ranks.h"
#include "converters/cluster/user_layers.h"
#include "converters/eztrace/environment.h"
#include "converters/eztrace/mpi_launcher.h"
#include "recorder/session/privileges.h"

namespace fs = std::filesystem;

namespace ezio::converters {
namespace {

// The value of hydra's option `name` (or its alias) before the program, "" when not given.
std::string hydra_option(const std::vector<std::string>& command,
                         std::initializer_list<const char*> names) {
  for (size_t i = 1; i + 1 < command.size(); ++i) {
    for (const char* n : names) {
      if (command[i] == n) return command[i + 1];
    }
  }
  return "";
}

std::string quoted(const std::string& word) {
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

void write_bootstrap(const fs::path& script, const std::vector<std::string>& recording) {
  std::ofstream f(script);
  f << hydra_bootstrap(recording);
  f.close();
  if (!f) fail("{}: cannot write hydra's bootstrap", script.string());
  fs::permissions(script, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                              fs::perms::others_read | fs::perms::others_exec);
}

}  // namespace

bool is_hydra_slurm(const std::vector<std::string>& command, const std::vector<std::string>& env) {
  if (command.empty() || launcher_mpi(command.front(), env) != "mpich") return false;
  if (!hydra_option(command, {"-bootstrap-exec", "-launcher-exec"}).empty()) return false;
  const std::string bootstrap = hydra_option(command, {"-bootstrap", "-launcher", "--launcher"});
  if (!bootstrap.empty()) return bootstrap == "slurm";
  const std::string nodes = env_value(env, "SLURM_JOB_NUM_NODES").value_or("");
  return !nodes.empty() && nodes != "0" && nodes != "1";
}

std::string hydra_bootstrap(const std::vector<std::string>& recording) {
  std::string words;
  for (const auto& w : recording) words += " " + quoted(w);
  // hydra's line is `srun [srun's options] <path>/hydra_pmi_proxy [the proxy's options]`: the
  // recording goes before the proxy, as for a task of `eziotrace record -- srun`.
  return fmt::format(
      "#!/bin/sh\n"
      "# eziotrace: hydra's srun, every node's proxy recorded into the job's session "
      "(docs/cluster.md)\n"
      "found=0 first=1\n"
      "for a do\n"
      "  [ $first = 1 ] && {{ set --; first=0; }}\n"
      "  case $found:$a in 0:*hydra_pmi_proxy) set --{}; found=1 ;; esac\n"
      "  set -- \"$@\" \"$a\"\n"
      "done\n"
      "[ $found = 1 ] || {{ echo \"eziotrace: hydra's srun line names no hydra_pmi_proxy: $*\" "
      ">&2; exit 1; }}\n"
      "exec srun \"$@\"\n",
      " \"$@\"" + words);
}

std::vector<std::string> hydra_launch(const SlurmStepOptions& o, const NodeSession& s,
                                      const fs::path& bootstrap, const fs::path& work) {
  const std::vector<std::string>& command = o.record.command;
  write_bootstrap(bootstrap, task_recording(launcher_task_options(o), s));
  std::vector<std::string> cmd =
      o.subcommand == "run"
          ? launcher_ranks_under_eztrace(o.rank_modules, command, s.parts / kJobEztraceDir, work)
          : command;
  std::vector<std::string> added = {"-bootstrap-exec", bootstrap.string()};
  if (hydra_option(command, {"-bootstrap", "-launcher", "--launcher"}).empty())
    added.insert(added.begin(), {"-bootstrap", "slurm"});  // what hydra picks in an allocation
  cmd.insert(cmd.begin() + 1, added.begin(), added.end());
  return cmd;
}

void hydra_step_command(const SlurmStepOptions& o) {
  PrivateDir tmp("eziotrace-hydra");  // this host's: hydra runs its bootstrap here
  recorder::give_to(tmp.path(), recorder::target_user());
  const fs::path script = tmp.path() / "srun", work = tmp.path() / "eztrace-setup";
  session_step_command(o, o.record.command.front(),
                       [&](const NodeSession& s) { return hydra_launch(o, s, script, work); });
}

}  // namespace ezio::converters
