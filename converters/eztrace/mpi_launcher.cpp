// SPDX-License-Identifier: GPL-2.0-only
#include "converters/eztrace/mpi_launcher.h"

#include <unistd.h>

#include <set>

#include "common/program_path.h"
#include "converters/eztrace/environment.h"

// MPI launchers get EZTrace's settings for their ranks only (docs/merge.md, "MPI programs";
// docs/mpiio.md, "Open MPI").
namespace ezio::converters {
namespace {

// The program a command runs, as the kernel will exec it (PATH searched, symlinks followed).
std::filesystem::path resolved_program(const std::string& word,
                                       const std::vector<std::string>& env) {
  return find_program(word, env_value(env, "PATH").value_or("/usr/local/bin:/usr/bin:/bin"));
}

// Launcher options followed by a value (MPICH's and Open MPI's usual ones): the value is not the
// program. -genv/-env and --mca take two.
int values_after(const std::string& option) {
  static const std::set<std::string> two = {"-genv", "-env", "--mca", "-mca", "-gmca"};
  static const std::set<std::string> one = {"-n",
                                            "-np",
                                            "-c",
                                            "--np",
                                            "-x",
                                            "-host",
                                            "--host",
                                            "-H",
                                            "-hosts",
                                            "-f",
                                            "-hostfile",
                                            "--hostfile",
                                            "-machinefile",
                                            "--machinefile",
                                            "-wdir",
                                            "--wdir",
                                            "-ppn",
                                            "-N",
                                            "--npernode",
                                            "--map-by",
                                            "--bind-to",
                                            "--rank-by",
                                            "-genvlist",
                                            "-envlist",
                                            "--prefix",
                                            "-launcher",
                                            "-bootstrap",
                                            "-iface",
                                            "--report-bindings-file"};
  if (two.count(option)) return 2;
  return one.count(option) ? 1 : 0;
}

bool is_executable_file(const std::filesystem::path& p) {
  std::error_code ec;
  return !p.empty() && std::filesystem::is_regular_file(p, ec) && access(p.c_str(), X_OK) == 0;
}

}  // namespace

std::string launcher_mpi(const std::string& word, const std::vector<std::string>& env) {
  std::string name = resolved_program(word, env).filename().string();
  if (name.starts_with("mpiexec.hydra")) return "mpich";
  if (name == "orterun" || name == "prterun") return "openmpi";
  return "";
}

std::filesystem::path application_of(const std::vector<std::string>& command,
                                     const std::vector<std::string>& env) {
  if (command.empty()) return {};
  if (launcher_mpi(command.front(), env).empty()) return resolved_program(command.front(), env);
  for (size_t i = 1; i < command.size(); ++i) {
    const std::string& w = command[i];
    if (w == "--") continue;
    if (w.starts_with("-")) {
      i += static_cast<size_t>(values_after(w));
      continue;
    }
    if (auto p = resolved_program(w, env); is_executable_file(p)) return p;
  }
  return {};
}

std::vector<std::string> eztrace_command(const EztraceSetup& setup,
                                         const std::vector<std::string>& command,
                                         std::vector<std::string>& env) {
  std::string mpi = command.empty() ? "" : launcher_mpi(command.front(), env);
  if (mpi.empty()) {
    for (const auto& e : setup.env)
      set_env(env, e.substr(0, e.find('=')), e.substr(e.find('=') + 1));
    return command;
  }
  // Global options go first: `mpiexec -genv N V ... -np 2 prog`, `orterun -x N=V ... -np 2
  // prog`. The launcher keeps the other settings too: they say that this run collects its
  // alignment data itself.
  std::vector<std::string> out = {command.front()};
  for (const auto& e : setup.env) {
    std::string name = e.substr(0, e.find('=')), value = e.substr(e.find('=') + 1);
    if (mpi == "mpich") {
      out.insert(out.end(), {"-genv", name, value});
    } else {
      out.insert(out.end(), {"-x", e});
    }
    if (name != "LD_PRELOAD") set_env(env, name, value);
  }
  out.insert(out.end(), command.begin() + 1, command.end());
  return out;
}

}  // namespace ezio::converters
