// SPDX-License-Identifier: GPL-2.0-only
#include "converters/eztrace/environment.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "common/error.h"
#include "common/schema/files.h"
#include "converters/eztrace/discovery.h"

namespace ezio::converters {

std::vector<std::string> split_modules(const std::vector<std::string>& module_args) {
  std::vector<std::string> out;
  for (const auto& arg : module_args) {
    std::string text = arg;
    std::replace(text.begin(), text.end(), ',', ' ');
    std::stringstream ss(text);
    std::string m;
    while (ss >> m) {
      if (std::find(out.begin(), out.end(), m) == out.end()) out.push_back(m);
    }
  }
  return out;
}

EztraceSetup prepare_eztrace(const std::vector<std::string>& module_args,
                             const std::filesystem::path& work_dir) {
  auto lib = find_eztrace_library("libeztrace-lib.so");
  if (!lib) {
    fail(
        "EZTrace is not installed: libeztrace-lib.so is in none of the EZTrace library "
        "directories (install the eztrace package, or set EZTRACE_LIBRARY_PATH)");
  }
  EztraceSetup s;
  s.modules = split_modules(module_args);
  auto has = [&](const char* m) {
    return std::find(s.modules.begin(), s.modules.end(), m) != s.modules.end();
  };
  if (has("posixio") && has("pthread")) {
    // Measured with EZTrace 2.0: pthread's mutex wrappers re-enter EZTrace's OTF2 lock while
    // posixio registers its strings in the constructor, and the program hangs before main.
    fail(
        "EZTrace 2.0 deadlocks at start-up when the posixio and pthread modules are loaded "
        "together; trace with one of them");
  }
  if (has("mpich") && has("openmpi")) {
    fail("the mpich and openmpi modules are for two different MPI libraries: trace with one");
  }
  std::string mpi = has("mpich") ? "mpich" : has("openmpi") ? "openmpi" : "";
  if (has("mpiio") && mpi.empty()) {
    // Measured with EZTrace 2.0: an MPI program traced without EZTrace's MPI module aborts in
    // EZTrace's finalization; and mpiio is built once per MPI (docs/mpiio.md).
    fail(
        "the mpiio module records MPI-IO inside EZTrace's MPI mode: trace with -t mpich,mpiio "
        "(MPICH) or -t openmpi,mpiio (Open MPI)");
  }
  std::vector<std::string> preload = {lib->string()};
  for (const auto& m : s.modules) {
    auto so = find_eztrace_library(fmt::format("libeztrace-{}.so", m), mpi);
    if (!so) {
      fail("EZTrace module '{}' does not exist{}; available: {}", m,
           m == "mpiio" ? fmt::format(" for {}", mpi) : "",
           fmt::join(available_eztrace_modules(), ", "));
    }
    preload.push_back(so->string());
  }
  // The helper goes last: its constructor then runs before EZTrace's (see eziotrace_preload.c).
  preload.push_back(preload_helper_path().string());
  if (const char* old = std::getenv("LD_PRELOAD"); old && *old) preload.emplace_back(old);

  s.trace_dir = work_dir / "eztrace";
  s.sidecar_dir = work_dir / schema::kAlignmentDir;
  std::error_code ec;
  std::filesystem::create_directories(s.trace_dir, ec);
  if (!ec) std::filesystem::create_directories(s.sidecar_dir, ec);
  if (ec) fail("cannot create {}: {}", work_dir.string(), ec.message());
  s.env = {fmt::format("LD_PRELOAD={}", fmt::join(preload, ":")),
           fmt::format("EZTRACE_TRACE={}", fmt::join(s.modules, " ")),
           fmt::format("EZTRACE_TRACE_DIR={}", s.trace_dir.string()),
           fmt::format("EZIOTRACE_SIDECAR_DIR={}", s.sidecar_dir.string())};
  // One trace directory per process image (the helper makes it), so that processes of one
  // program do not overwrite each other's trace. Not for MPI: the ranks write one archive
  // together, into the directory each of them names.
  if (!has("mpich") && !has("openmpi")) {
    s.env.push_back(fmt::format("EZIOTRACE_TRACE_BASE={}", s.trace_dir.string()));
  }
  return s;
}

std::optional<std::string> env_value(const std::vector<std::string>& env, std::string_view name) {
  std::optional<std::string> out;
  for (const auto& e : env) {
    if (e.size() > name.size() && e.compare(0, name.size(), name) == 0 && e[name.size()] == '=') {
      out = e.substr(name.size() + 1);
    }
  }
  return out;
}

void set_env(std::vector<std::string>& env, std::string_view name, const std::string& value) {
  std::erase_if(env, [&](const std::string& e) {
    return e.size() > name.size() && e.compare(0, name.size(), name) == 0 && e[name.size()] == '=';
  });
  env.push_back(fmt::format("{}={}", name, value));
}

bool runs_eztrace(const std::vector<std::string>& command, const std::vector<std::string>& env) {
  for (const auto& word : command) {
    if (std::filesystem::path(word).filename() == "eztrace") return true;
  }
  return env_value(env, "LD_PRELOAD").value_or("").find("libeztrace") != std::string::npos;
}

}  // namespace ezio::converters
