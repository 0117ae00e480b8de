// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// `eziotrace record -o DIR -- mpirun ... program` with Open MPI's launcher (ORTE, 4.x) inside a
// Slurm allocation of several nodes: mpirun runs the ranks of its own node itself and starts one
// `orted` on each other node with srun (plm/slurm), the command srun runs being the MCA parameter
// orte_launch_agent ("orted" by default). eziotrace opens the job's session (slurm_step.h:
// DIR.parts, a clock server, the merge) and runs mpirun as this node's task, `eziotrace record --
// mpirun ...` with the session, so that mpirun and its local ranks are this node's part; the launch
// agent becomes `env EZIOTRACE_SESSION=... eziotrace record -- orted`, so that srun starts every
// other node's orted, and with it that node's ranks (its children), under a recording through that
// node's eziotraced. With `run`, the ranks run under EZTrace (launcher_ranks.h). No root, no ssh,
// no launcher of ours (docs/cluster.md, "MPI launchers across hosts").
#include <filesystem>
#include <string>
#include <vector>

#include "converters/cluster/slurm_step.h"

namespace ezio::converters {

// Whether `command` is Open MPI's launcher inside an allocation of several nodes with no host
// list, host file or rsh launcher of its own: its remote daemons then start through srun.
bool is_orte_slurm(const std::vector<std::string>& command, const std::vector<std::string>& env);

// The launch agent that records each remote orted into the session's parts: words without
// blanks, as ORTE splits the parameter at spaces. agent: the user's own launch agent, or "".
std::vector<std::string> orte_agent(const SlurmStepOptions& o, const NodeSession& s,
                                    const std::string& agent);

// `env OMPI_MCA_orte_launch_agent=AGENT EZIOTRACE_SESSION=... eziotrace record ... -- mpirun ...`:
// this node's task in session s, mpirun and the ranks it starts here recorded into its part; in
// `run`, mpirun's command carries EZTrace's settings for its ranks (work: a private directory for
// EZTrace's set-up).
std::vector<std::string> orte_launch(const SlurmStepOptions& o, const NodeSession& s,
                                     const std::string& user_agent,
                                     const std::filesystem::path& work);

// Runs mpirun as this node's task of the session with the recording launch agent, merges the
// parts into DIR, sets the command's status (mpirun's when it failed, 4 when a part is missing or
// not whole). o.subcommand: "record", or "run" (EZTrace's layers of the ranks, modules
// o.rank_modules). Fails before starting anything when the launch agent
// is set on mpirun's command line or a word of it would hold a blank.
void orte_step_command(const SlurmStepOptions& o);

}  // namespace ezio::converters
