// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// `eziotrace record|run -o DIR -- mpiexec.hydra -bootstrap slurm ... program` inside a Slurm
// allocation: MPICH's hydra starts one hydra_pmi_proxy per node with srun, and starts the ranks
// under them. eziotrace opens the job's session as for srun (slurm_step.h: DIR.parts, a clock
// server, the merge) and gives hydra its own bootstrap executable (-bootstrap-exec), which runs
// hydra's srun line with each proxy under `env EZIOTRACE_SESSION=... eziotrace record -- proxy`:
// every node's proxy, and with it every rank of that node, is recorded through its node's
// eziotraced into its part. With `run`, the ranks run under EZTrace (launcher_ranks.h). No root,
// no ssh: Slurm still starts everything (docs/cluster.md, "MPI launchers across hosts").
#include <filesystem>
#include <string>
#include <vector>

#include "converters/cluster/slurm_step.h"

namespace ezio::converters {

// Whether `command` is MPICH's launcher starting its proxies through Slurm: `-bootstrap slurm`
// (or -launcher), or no bootstrap named inside an allocation of several nodes, where hydra picks
// Slurm's. env: the command's environment.
bool is_hydra_slurm(const std::vector<std::string>& command, const std::vector<std::string>& env);

// hydra's bootstrap: `srun [srun's options] recording... hydra_pmi_proxy [its options]`, the
// words of `recording` (task_recording) put before the proxy; fails when hydra names no proxy.
std::string hydra_bootstrap(const std::vector<std::string>& recording);

// The launcher's command in session s: o.record.command with the bootstrap (written to
// `bootstrap`) and Slurm's bootstrap named; in `run`, EZTrace's settings for its ranks (work: a
// private directory for EZTrace's set-up).
std::vector<std::string> hydra_launch(const SlurmStepOptions& o, const NodeSession& s,
                                      const std::filesystem::path& bootstrap,
                                      const std::filesystem::path& work);

// Runs the launcher in the job's session, merges the parts into DIR, sets the command's status:
// the launcher's when it failed, else 4 when a host's part is missing or not whole, else 0.
// o.subcommand: "record", or "run" (EZTrace's layers of the ranks, modules o.rank_modules).
void hydra_step_command(const SlurmStepOptions& o);

}  // namespace ezio::converters
