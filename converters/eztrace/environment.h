// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The environment that runs a command under EZTrace with eziotrace's preload helper:
//
//   auto setup = ezio::converters::prepare_eztrace({"posixio"}, work_dir);
//   auto command = ezio::converters::eztrace_command(setup, cmd, env);
//   // run command with env under the kernel recorder, then finish_eztrace (run_merge.h)
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ezio::converters {

struct EztraceSetup {
  std::vector<std::string> env;       // "NAME=value" entries to add to the command's environment
  std::filesystem::path trace_dir;    // EZTRACE_TRACE_DIR: EZTrace writes <prog>_trace here
  std::filesystem::path sidecar_dir;  // EZIOTRACE_SIDECAR_DIR: the helper's alignment files
  std::vector<std::string> modules;   // as loaded, e.g. {"posixio"}
};

// The module names of `-t` arguments, each of which may hold several separated by ',' or ' ', in
// order, each once.
std::vector<std::string> split_modules(const std::vector<std::string>& module_args);

// Builds the environment the `eztrace -t` launcher would (LD_PRELOAD of libeztrace-lib.so and
// libeztrace-<module>.so, EZTRACE_TRACE) plus the preload helper, with EZTrace's output and the
// alignment files in work_dir (created; should be private and empty). modules: names as
// `eztrace -t` takes them, each entry may hold several separated by ',' or ' '.
// Throws ezio::Error with a clear message when EZTrace or a module is not installed.
EztraceSetup prepare_eztrace(const std::vector<std::string>& modules,
                             const std::filesystem::path& work_dir);

// The command line that runs `command` under EZTrace as set up: setup.env is added to env, except
// when the command is an MPI launcher (MPICH's mpiexec.hydra, Open MPI's orterun, also as mpirun,
// mpiexec, mpirun.openmpi...): then the settings reach the ranks only, through -genv or -x,
// because EZTrace's MPI module preloaded into the launcher and its proxies or daemons (which
// never call MPI_Init) makes them abort at exit (mpi_launcher.cpp).
std::vector<std::string> eztrace_command(const EztraceSetup& setup,
                                         const std::vector<std::string>& command,
                                         std::vector<std::string>& env);

// `eziotrace record` of a command that runs EZTrace itself (`eztrace -t ...`, or EZTrace's
// libraries in LD_PRELOAD): true when the command line or env says so.
bool runs_eztrace(const std::vector<std::string>& command, const std::vector<std::string>& env);

// The last value of NAME in a "NAME=value" list; set_env replaces every entry of it.
std::optional<std::string> env_value(const std::vector<std::string>& env, std::string_view name);
void set_env(std::vector<std::string>& env, std::string_view name, const std::string& value);

}  // namespace ezio::converters
