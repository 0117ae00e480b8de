// SPDX-License-Identifier: GPL-2.0-only
#include "converters/cluster/launcher_ranks.h"

#include <algorithm>
#include <cstdlib>

#include "common/error.h"
#include "converters/eztrace/environment.h"
#include "converters/eztrace/mpi_detect.h"
#include "recorder/session/launcher.h"

namespace fs = std::filesystem;

namespace ezio::converters {

PrivateDir::PrivateDir(const std::string& prefix) {
  std::string tmpl = (fs::temp_directory_path() / (prefix + ".XXXXXX")).string();
  if (!mkdtemp(tmpl.data())) fail("mkdtemp {}: {}", tmpl, errno_text(errno));
  path_ = tmpl;
}

PrivateDir::~PrivateDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

std::vector<std::string> launcher_ranks_under_eztrace(const std::vector<std::string>& modules,
                                                      const std::vector<std::string>& command,
                                                      const fs::path& trace_dir,
                                                      const fs::path& work_dir) {
  std::vector<std::string> env = recorder::current_environment();
  EztraceSetup setup = prepare_eztrace(modules_for(modules, command, env), work_dir);
  // Every rank names the job's directory, as under `run -- srun` (user_layers.cpp).
  set_env(setup.env, "EZTRACE_TRACE_DIR", trace_dir.string());
  if (env_value(setup.env, "EZIOTRACE_TRACE_BASE"))
    set_env(setup.env, "EZIOTRACE_TRACE_BASE", trace_dir.string());
  std::erase_if(setup.env,
                [](const std::string& e) { return e.starts_with("EZIOTRACE_SIDECAR_DIR="); });
  // The launcher's own environment is left as it is: its settings reach the ranks only.
  return eztrace_command(setup, command, env);
}

SlurmStepOptions launcher_task_options(const SlurmStepOptions& o) {
  SlurmStepOptions t = o;
  if (o.subcommand != "run") return t;
  t.subcommand = "record";
  t.task_options.push_back("--eztrace-alignment");
  return t;
}

}  // namespace ezio::converters
