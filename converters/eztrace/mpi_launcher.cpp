// SPDX-License-Identifier: GPL-2.0-only
#include "common/program_path.h"
#include "converters/eztrace/environment.h"

// MPICH's launcher gets EZTrace's settings for its ranks only (docs/merge.md, "MPI programs").
namespace ezio::converters {
namespace {

// The program a command runs, as the kernel will exec it (PATH searched, symlinks followed).
std::filesystem::path resolved_program(const std::string& word,
                                       const std::vector<std::string>& env) {
  return find_program(word, env_value(env, "PATH").value_or("/usr/local/bin:/usr/bin:/bin"));
}

}  // namespace

std::vector<std::string> eztrace_command(const EztraceSetup& setup,
                                         const std::vector<std::string>& command,
                                         std::vector<std::string>& env) {
  if (command.empty() ||
      !resolved_program(command.front(), env).filename().string().starts_with("mpiexec.hydra")) {
    for (const auto& e : setup.env)
      set_env(env, e.substr(0, e.find('=')), e.substr(e.find('=') + 1));
    return command;
  }
  // Global options go first: `mpiexec -genv N V ... -np 2 prog`. The launcher keeps the other
  // settings too: they say that this run collects its alignment data itself.
  std::vector<std::string> out = {command.front()};
  for (const auto& e : setup.env) {
    std::string name = e.substr(0, e.find('=')), value = e.substr(e.find('=') + 1);
    out.insert(out.end(), {"-genv", name, value});
    if (name != "LD_PRELOAD") set_env(env, name, value);
  }
  out.insert(out.end(), command.begin() + 1, command.end());
  return out;
}

}  // namespace ezio::converters
