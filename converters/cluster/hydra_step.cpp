// SPDX-License-Identifier: GPL-2.0-only
#include "converters/cluster/hydra_step.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "common/command.h"
#include "common/error.h"
#include "common/output_dir.h"
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

// A private directory (not shared: hydra runs its bootstrap on this host) removed at the end.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "eziotrace-hydra.XXXXXX").string();
    if (!mkdtemp(tmpl.data())) fail("mkdtemp {}: {}", tmpl, errno_text(errno));
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// hydra's bootstrap: `<bootstrap> [srun's options] hydra_pmi_proxy [its options]` becomes the srun
// step of `eziotrace record`; its status (4: partial) is written for this process, not hydra.
void write_bootstrap(const fs::path& script, const fs::path& status, const SlurmStepOptions& o,
                     const fs::path& out) {
  std::string line = quoted(fs::read_symlink("/proc/self/exe").string()) + " record";
  for (const auto& w : o.task_options) line += " " + quoted(w);
  line += " -o " + quoted(out.string()) + " -- srun \"$@\"";
  std::ofstream f(script);
  f << "#!/bin/sh\n# eziotrace: hydra's srun, every proxy recorded (docs/cluster.md)\n"
    << line << "\nrc=$?\necho $rc > " << quoted(status.string())
    << "\n[ $rc -eq 4 ] && exit 0\nexit $rc\n";
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

void hydra_step_command(const SlurmStepOptions& o) {
  const recorder::RecordOptions& rec = o.record;
  const fs::path out =
      fs::absolute(output_path(rec.output.string(), rec.command.front()));  // as named
  check_output(out, rec.force);
  TempDir tmp;
  recorder::give_to(tmp.path, recorder::target_user());
  const fs::path script = tmp.path / "srun", status_file = tmp.path / "status";
  write_bootstrap(script, status_file, o, out);
  std::vector<std::string> cmd = {rec.command.front(), "-bootstrap-exec", script.string()};
  if (hydra_option(rec.command, {"-bootstrap", "-launcher", "--launcher"}).empty()) {
    cmd.insert(cmd.begin() + 1, {"-bootstrap", "slurm"});  // what hydra picks in an allocation
  }
  cmd.insert(cmd.end(), rec.command.begin() + 1, rec.command.end());
  const StepEnd end = run_step(cmd);
  std::ifstream in(status_file);
  int step_status = -1;
  if (!(in >> step_status)) {
    fail("{} exited {} without starting its proxies through srun: nothing was recorded",
         rec.command.front(), end.status);
  }
  command_status() = end.status != 0 ? end.status : step_status;
}

}  // namespace ezio::converters
