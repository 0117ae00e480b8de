// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// `eziotrace record -o DIR -- mpiexec.hydra -bootstrap slurm ... program` inside a Slurm
// allocation: MPICH's hydra starts one hydra_pmi_proxy per node with srun, and starts the ranks
// under them. eziotrace gives hydra its own bootstrap executable (-bootstrap-exec), which runs
// that srun line as `eziotrace record -o DIR -- srun ... hydra_pmi_proxy ...`: the srun step of
// slurm_step.h, so that every node's proxy, and with it every rank of that node, is recorded
// through its node's eziotraced and the parts merged into DIR (docs/cluster.md, "MPI launchers
// across hosts"). No root, no ssh: Slurm still starts everything.
#include <string>
#include <vector>

#include "converters/cluster/slurm_step.h"

namespace ezio::converters {

// Whether `command` is MPICH's launcher starting its proxies through Slurm: `-bootstrap slurm`
// (or -launcher), or no bootstrap named inside an allocation of several nodes, where hydra picks
// Slurm's. env: the command's environment.
bool is_hydra_slurm(const std::vector<std::string>& command, const std::vector<std::string>& env);

// Runs the launcher with the bootstrap that records every proxy, sets the command's status: the
// launcher's when it failed, else the srun step's (4 when a host's part is missing or not whole).
// o.subcommand must be "record".
void hydra_step_command(const SlurmStepOptions& o);

}  // namespace ezio::converters
