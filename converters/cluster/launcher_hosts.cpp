// SPDX-License-Identifier: GPL-2.0-only
#include "converters/cluster/launcher_hosts.h"

#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>

#include "common/error.h"
#include "converters/eztrace/environment.h"
#include "converters/eztrace/mpi_launcher.h"

namespace ezio::converters {
namespace {

bool local_host(const std::string& h) {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  const std::string self(name);
  return h.empty() || h == "localhost" || h == "127.0.0.1" || h == "::1" || h == self ||
         h == self.substr(0, self.find('.'));
}

// The hosts of a list "a,b:2,c" other than this one.
std::string remote_hosts(const std::string& list) {
  std::string remote;
  std::stringstream in(list);
  for (std::string h; std::getline(in, h, ',');) {
    h = h.substr(0, h.find(':'));
    if (!local_host(h)) remote += (remote.empty() ? "" : ",") + h;
  }
  return remote;
}

}  // namespace

std::string launcher_remote_option(const std::vector<std::string>& command,
                                   const std::vector<std::string>& env) {
  const std::string program = application_of(command, env).filename().string();
  for (size_t i = 1; i + 1 < command.size(); ++i) {
    const std::string& o = command[i];
    if (!program.empty() && std::filesystem::path(o).filename() == program) break;
    const std::string& v = command[i + 1];
    if ((o == "-bootstrap" || o == "-launcher" || o == "--launcher") && v != "fork") {
      return fmt::format("{} {} starts its proxies on other hosts", o, v);
    }
    if (o == "-host" || o == "-hosts" || o == "--host" || o == "-H") {
      if (std::string r = remote_hosts(v); !r.empty())
        return fmt::format("{} {} names {}", o, v, r);
    }
    if (o == "-f" || o == "-hostfile" || o == "--hostfile" || o == "-machinefile" ||
        o == "--machinefile" || o == "--default-hostfile") {
      return fmt::format("{} {} places ranks on the hosts of a file", o, v);
    }
  }
  return "";
}

std::string launcher_across_hosts(const std::vector<std::string>& command,
                                  const std::vector<std::string>& env) {
  if (command.empty() || launcher_mpi(command.front(), env).empty()) return "";
  if (std::string why = launcher_remote_option(command, env); !why.empty()) return why;
  // Both launchers take a Slurm allocation's nodes as theirs (hydra's slurm bootstrap, Open MPI's
  // ras/plm slurm) and start their proxies there with srun.
  const std::string nodes = env_value(env, "SLURM_JOB_NUM_NODES").value_or("");
  if (!nodes.empty() && nodes != "1" && nodes != "0") {
    return fmt::format("it runs inside Slurm job {} of {} nodes, whose nodes it starts ranks on",
                       env_value(env, "SLURM_JOB_ID").value_or(""), nodes);
  }
  return "";
}

void refuse_launcher_across_hosts(const std::vector<std::string>& command,
                                  const std::vector<std::string>& env) {
  const std::string why = launcher_across_hosts(command, env);
  if (why.empty()) return;
  fail(
      "{}: its ranks on other hosts would run out of eziotrace's reach ({}). Across nodes, "
      "record the job through Slurm: `eziotrace record -o DIR -- srun -N N [--mpi=pmi2] "
      "program`, MPICH's `eziotrace record -o DIR -- mpiexec.hydra -bootstrap slurm ...` or "
      "Open MPI's `eziotrace record -o DIR -- mpirun ...` inside the allocation (docs/cluster.md); "
      "for this host's ranks only, run the launcher on one node "
      "(`salloc -N 1`, or without remote hosts)",
      command.front(), why);
}

}  // namespace ezio::converters
