// SPDX-License-Identifier: GPL-2.0-only
#include "converters/eztrace/mpi_detect.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <regex>
#include <set>

#include "common/error.h"
#include "common/unique_fd.h"
#include "converters/eztrace/discovery.h"
#include "converters/eztrace/elf_needed.h"
#include "converters/eztrace/environment.h"
#include "converters/eztrace/mpi_launcher.h"

namespace fs = std::filesystem;

namespace ezio::converters {
namespace {

// The MPI of a library name: MPICH's ABI (libmpich.so.12, and MPICH's libmpi.so.12), Open MPI's
// (libmpi.so.40 in 3.x-4.x).
std::string mpi_of_library(const std::string& name) {
  if (name.starts_with("libmpich.so") || name == "libmpi.so.12") return "mpich";
  if (name.starts_with("libmpi.so.")) return "openmpi";
  return "";
}

const char* title(const std::string& mpi) { return mpi == "mpich" ? "MPICH" : "Open MPI"; }

MpiUse mpi_of_elf(const fs::path& file, const std::vector<std::string>& env) {
  MpiUse use;
  visit_needed(file, env_value(env, "LD_LIBRARY_PATH").value_or(""),
               [&](const std::string& name, const fs::path& by) {
                 use.mpi = mpi_of_library(name);
                 if (use.mpi.empty()) return false;
                 use.library = name;
                 use.via = by;
                 return true;
               });
  return use;
}

// Where `python` finds mpi4py's package directory, with env (PYTHONPATH, a virtualenv): asked of
// the interpreter itself. find_spec locates the package without importing it.
fs::path mpi4py_dir(const fs::path& python, const std::vector<std::string>& env) {
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) return {};
  UniqueFd read_end(pipe_fds[0]), write_end(pipe_fds[1]);
  posix_spawn_file_actions_t io;
  posix_spawn_file_actions_init(&io);
  posix_spawn_file_actions_adddup2(&io, write_end.get(), 1);
  posix_spawn_file_actions_addopen(&io, 2, "/dev/null", O_WRONLY, 0);
  std::string code =
      "import importlib.util as u\n"
      "s = u.find_spec('mpi4py')\n"
      "print(s.submodule_search_locations[0] if s and s.submodule_search_locations else '')\n";
  std::vector<std::string> args = {python.string(), "-c", code};
  std::vector<char*> argv, envp;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_copy = env;
  for (auto& e : env_copy) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = 0;
  int err = posix_spawn(&pid, argv[0], &io, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&io);
  write_end = UniqueFd();
  if (err != 0) return {};
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = read(read_end.get(), buf, sizeof buf)) > 0;) out.append(buf, n);
  int status = 0;
  waitpid(pid, &status, 0);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? fs::path(out) : fs::path();
}

MpiUse mpi_of_python(const fs::path& python, const std::vector<std::string>& env) {
  fs::path dir = mpi4py_dir(python, env);
  std::error_code ec;
  if (dir.empty()) return {};
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::string f = e.path().filename().string();
    if (f.starts_with("MPI.") && e.path().extension() == ".so") return mpi_of_elf(e.path(), env);
  }
  return {};
}

bool is_python(const fs::path& program) {
  static const std::regex python(R"(python[0-9.]*)");
  return std::regex_match(program.filename().string(), python);
}

bool is_elf(const fs::path& file) {
  char magic[4] = {};
  std::ifstream in(file, std::ios::binary);
  return in.read(magic, sizeof magic) && std::string_view(magic, 4) ==
                                             "\x7f"
                                             "ELF";
}

// Programs that start others: that they need no MPI says nothing of the programs they run.
bool runs_other_programs(const fs::path& program) {
  static const std::set<std::string> runners = {
      "sh",      "bash",     "dash",   "zsh",  "ksh",    "mksh",    "csh",  "tcsh",
      "fish",    "busybox",  "env",    "time", "nohup",  "timeout", "nice", "ionice",
      "taskset", "numactl",  "stdbuf", "chrt", "setsid", "xargs",   "make", "strace",
      "ltrace",  "valgrind", "perf",   "gdb",  "flock",  "sudo",    "su",   "runuser"};
  return runners.contains(program.filename().string());
}

bool is_mpi_module(const std::string& m) { return m == "mpich" || m == "openmpi" || m == "mpiio"; }

// MPI modules asked for a program that uses no MPI: EZTrace's MPI module makes such a program
// exit with status 1 and write no trace, and mpiio needs that module. Each is said once and left
// out; the other modules' calls are recorded.
std::vector<std::string> without_mpi_modules(const std::vector<std::string>& names,
                                             const fs::path& app) {
  std::vector<std::string> kept;
  std::string dropped;
  for (const auto& m : names) {
    if (!is_mpi_module(m)) {
      kept.push_back(m);
    } else {
      dropped += (dropped.empty() ? "" : ",") + m;
    }
  }
  std::string name = app.filename().string();
  if (kept.empty()) {
    fail(
        "-t {}: {} uses no MPI library (none among the libraries it needs), and no other module "
        "was asked for: trace it with -t posixio, or record its kernel layers alone with "
        "eziotrace record",
        dropped, name);
  }
  spdlog::warn(
      "-t {} was asked for, but {} uses no MPI library (none among the libraries it needs): no "
      "MPI or MPI-IO call is recorded; the other modules' calls ({}) are",
      dropped, name, fmt::join(kept, ","));
  return kept;
}

}  // namespace

MpiUse mpi_of_program(const fs::path& program, const std::vector<std::string>& env) {
  if (is_python(program)) return mpi_of_python(program, env);
  return mpi_of_elf(program, env);
}

std::vector<std::string> modules_for(const std::vector<std::string>& modules,
                                     const std::vector<std::string>& command,
                                     const std::vector<std::string>& env) {
  std::vector<std::string> names = split_modules(modules);
  std::string named;
  for (const auto& m : names) {
    if (m == "mpich" || m == "openmpi") named = m;
  }
  fs::path app = application_of(command, env);
  // A Python interpreter's MPI is mpi4py's: only under an MPI launcher, where the script is an
  // MPI program (alone, a Python script with mpi4py installed may well use no MPI).
  bool launched = !command.empty() && !launcher_mpi(command.front(), env).empty();
  if (app.empty() || (!launched && is_python(app))) {
    return modules;
  }
  MpiUse use = mpi_of_program(app, env);
  if (use.mpi.empty()) {
    // Only a program seen whole: not one a launcher, a shell or a script starts.
    bool any_mpi = std::any_of(names.begin(), names.end(), is_mpi_module);
    if (!any_mpi || launched || is_python(app) || runs_other_programs(app) || !is_elf(app))
      return modules;
    return without_mpi_modules(names, app);
  }
  if (!named.empty() && named != use.mpi) {
    fail(
        "-t {} is EZTrace's module for {}, but {} uses {} ({} needed by {}): trace with -t {}, "
        "or name no MPI module and eziotrace chooses it",
        named, title(named), app.filename().string(), title(use.mpi), use.library, use.via.string(),
        use.mpi);
  }
  bool has_mpiio = std::find(names.begin(), names.end(), "mpiio") != names.end();
  bool has_hdf5 = std::find(names.begin(), names.end(), "hdf5") != names.end();
  bool mpiio_built = !has_mpiio && find_eztrace_library("libeztrace-mpiio.so", use.mpi);
  if (!named.empty()) {
    // The MPI module named stays the user's choice; but HDF5 on MPI does its I/O through
    // MPI-IO, and without mpiio the stack would have a hole between the HDF5 and POSIX calls.
    if (!has_hdf5 || !mpiio_built) return modules;
    spdlog::info("{} uses {}: tracing its HDF5 calls with the mpiio EZTrace module too",
                 app.filename().string(), title(use.mpi));
    std::vector<std::string> out = modules;
    out.emplace_back("mpiio");
    return out;
  }
  std::vector<std::string> out = modules;
  out.push_back(use.mpi);
  // mpiio too, where it is built for that MPI.
  bool add_mpiio = mpiio_built;
  if (add_mpiio) out.emplace_back("mpiio");
  spdlog::info(
      "{} uses {} ({} needed by {}): tracing with the {} EZTrace module{} too (an MPI module "
      "named with -t overrides this)",
      app.filename().string(), title(use.mpi), use.library, use.via.string(), use.mpi,
      add_mpiio ? " and mpiio" : "");
  return out;
}

}  // namespace ezio::converters
