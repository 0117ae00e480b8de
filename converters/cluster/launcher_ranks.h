// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// EZTrace's layers of the ranks of an MPI launcher across nodes, `eziotrace run -o DIR --
// mpiexec.hydra -bootstrap slurm ...` or `-- mpirun ...` inside an allocation (docs/cluster.md,
// "EZTrace's layers through the MPI launchers"). The launcher's step is the one `record` runs
// (hydra_step.h, orte_step.h): each node's proxy or orted, and so that node's ranks, recorded
// through its node's eziotraced into its part, with the helper's alignment data of the processes
// below it (`record --eztrace-alignment`). The ranks alone get EZTrace, through the launcher's
// options for its ranks' environment (-genv, -x), as on one node (mpi_launcher.cpp): EZTrace in a
// proxy or daemon, which never calls MPI_Init, makes it abort at exit. Every rank writes into the
// job's one EZTrace directory, and the parts are merged with it as for `run -- srun`
// (user_layers.h).
#include <filesystem>
#include <string>
#include <vector>

#include "converters/cluster/slurm_step.h"

namespace ezio::converters {

// A private directory of this host (mkdtemp under TMPDIR), removed at the end.
class PrivateDir {
 public:
  explicit PrivateDir(const std::string& prefix);
  ~PrivateDir();
  PrivateDir(const PrivateDir&) = delete;
  PrivateDir& operator=(const PrivateDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// The launcher's command with EZTrace's settings (modules as `-t` takes them, the MPI module
// chosen as on one node) given to its ranks only, their trace in trace_dir. Not the helper's
// alignment directory: each rank takes its node's from the recording of the proxy or orted it
// descends from, so that each part holds the data of its own ranks. work_dir: private, for
// EZTrace's set-up.
std::vector<std::string> launcher_ranks_under_eztrace(const std::vector<std::string>& modules,
                                                      const std::vector<std::string>& command,
                                                      const std::filesystem::path& trace_dir,
                                                      const std::filesystem::path& work_dir);

// The options of a launcher step's tasks: in `run` (its ranks under EZTrace), `record` of the
// proxies or daemons with the alignment data of the ranks below them; else o itself.
SlurmStepOptions launcher_task_options(const SlurmStepOptions& o);

}  // namespace ezio::converters
