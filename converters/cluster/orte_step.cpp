// SPDX-License-Identifier: GPL-2.0-only
#include "converters/cluster/orte_step.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <optional>
#include <sstream>

#include "common/error.h"
#include "common/output_dir.h"
#include "converters/cluster/launcher_hosts.h"
#include "converters/cluster/launcher_ranks.h"
#include "converters/cluster/user_layers.h"
#include "converters/eztrace/environment.h"
#include "converters/eztrace/mpi_launcher.h"
#include "recorder/session/launcher.h"

namespace fs = std::filesystem;

namespace ezio::converters {
namespace {

constexpr char kAgentParam[] = "orte_launch_agent";
constexpr char kSidecarEnv[] = "EZIOTRACE_SIDECAR_DIR";

// The launcher's words before its program (the program's own options are not mpirun's).
std::vector<std::string> launcher_words(const std::vector<std::string>& command,
                                        const std::vector<std::string>& env) {
  const std::string program = application_of(command, env).filename().string();
  std::vector<std::string> words;
  for (size_t i = 1; i < command.size(); ++i) {
    if (!program.empty() && fs::path(command[i]).filename() == program) break;
    words.push_back(command[i]);
  }
  return words;
}

bool is_mca_option(const std::string& w) {
  return w == "--mca" || w == "-mca" || w == "--gmca" || w == "-gmca";
}

// MCA parameter `name` as mpirun would take it: its command line first, then OMPI_MCA_<name>.
std::optional<std::string> mca_value(const std::vector<std::string>& command,
                                     const std::vector<std::string>& env, const std::string& name) {
  const std::vector<std::string> w = launcher_words(command, env);
  for (size_t i = 0; i + 2 < w.size(); ++i) {
    if (is_mca_option(w[i]) && w[i + 1] == name) return w[i + 2];
  }
  return env_value(env, "OMPI_MCA_" + name);
}

// Set on mpirun's command line, the launch agent would override the one eziotrace sets.
bool agent_on_command_line(const std::vector<std::string>& command,
                           const std::vector<std::string>& env) {
  const std::vector<std::string> w = launcher_words(command, env);
  for (size_t i = 0; i < w.size(); ++i) {
    if (w[i] == "--launch-agent" || w[i] == "-launch-agent" || w[i].starts_with("--launch-agent="))
      return true;
    if (is_mca_option(w[i]) && i + 1 < w.size() && w[i + 1] == kAgentParam) return true;
  }
  return false;
}

std::vector<std::string> split_blanks(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

}  // namespace

std::vector<std::string> orte_launch(const SlurmStepOptions& o, const NodeSession& s,
                                     const std::string& user_agent, const fs::path& work) {
  std::vector<std::string> cmd = task_recording(launcher_task_options(o), s);
  // env takes several assignments: the agent's goes beside the session's.
  cmd.insert(cmd.begin() + 1, std::string("OMPI_MCA_") + kAgentParam + "=" +
                                  fmt::format("{}", fmt::join(orte_agent(o, s, user_agent), " ")));
  const std::vector<std::string> launcher =
      o.subcommand == "run" ? launcher_ranks_under_eztrace(o.rank_modules, o.record.command,
                                                           s.parts / kJobEztraceDir, work)
                            : o.record.command;
  cmd.insert(cmd.end(), launcher.begin(), launcher.end());
  return cmd;
}

bool is_orte_slurm(const std::vector<std::string>& command, const std::vector<std::string>& env) {
  if (command.empty() || launcher_mpi(command.front(), env) != "openmpi") return false;
  const std::string nodes = env_value(env, "SLURM_JOB_NUM_NODES").value_or("");
  if (nodes.empty() || nodes == "0" || nodes == "1") return false;
  if (!launcher_remote_option(command, env).empty()) return false;
  const std::string plm = mca_value(command, env, "plm").value_or("");
  return plm.empty() || plm == "slurm";
}

std::vector<std::string> orte_agent(const SlurmStepOptions& o, const NodeSession& s,
                                    const std::string& agent) {
  std::vector<std::string> words = task_recording(launcher_task_options(o), s);
  // srun hands the orted mpirun's environment, where the recording of mpirun's node named its
  // own alignment directory: each node's recording collects its ranks' alignment data itself.
  words.insert(words.begin() + 1, {"-u", kSidecarEnv});
  const std::vector<std::string> user = split_blanks(agent);
  if (user.empty()) words.push_back("orted");
  words.insert(words.end(), user.begin(), user.end());
  for (const auto& w : words) {
    if (w.find_first_of(" \t\n") != std::string::npos) {
      fail(
          "Open MPI splits its launch agent at spaces, and \"{}\" holds one: record this job "
          "with an output directory and an eziotrace installation whose paths have no blank",
          w);
    }
  }
  return words;
}

void orte_step_command(const SlurmStepOptions& o) {
  const std::vector<std::string>& command = o.record.command;
  const std::vector<std::string> env = recorder::current_environment();
  if (agent_on_command_line(command, env)) {
    fail(
        "{}: eziotrace starts each node's orted under its recording through the launch agent; "
        "give yours as OMPI_MCA_{} in the environment instead of on mpirun's command line "
        "(eziotrace then runs it under the recording)",
        command.front(), kAgentParam);
  }
  const std::string user_agent =
      env_value(env, std::string("OMPI_MCA_") + kAgentParam).value_or("");
  std::string program = application_of(command, env).filename().string();
  if (program.empty()) program = command.front();
  // The words are checked before anything is made: the parts' path is DIR.parts.
  fs::path parts = fs::absolute(output_path(o.record.output.string(), program));
  parts += ".parts";
  orte_agent(o, {parts, "host:0"}, user_agent);
  PrivateDir tmp("eziotrace-orte");
  session_step_command(o, program, [&](const NodeSession& s) {
    return orte_launch(o, s, user_agent, tmp.path() / "eztrace-setup");
  });
}

}  // namespace ezio::converters
