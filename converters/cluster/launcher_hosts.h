// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// An MPI launcher (mpiexec.hydra, mpirun...) given to eziotrace that would start ranks on other
// hosts: inside a Slurm allocation of several nodes (hydra's slurm bootstrap, Open MPI's orted
// through srun), or told a remote bootstrap or other hosts explicitly. Those ranks would run out of
// the recording's reach, so such a command is refused with what to run instead, rather than
// recorded as a job whose remote ranks are silently missing (docs/cluster.md, "MPI launchers").
#include <string>
#include <vector>

namespace ezio::converters {

// The launcher's own options (up to its program, whose options are not the launcher's) that
// start ranks elsewhere: a remote bootstrap, other hosts named, a host file; "" when none.
std::string launcher_remote_option(const std::vector<std::string>& command,
                                   const std::vector<std::string>& env);

// Why `command` starts ranks on other hosts, "" when it does not (not a launcher, or every rank
// on this host). env: the environment the command runs in (SLURM_JOB_NUM_NODES, PATH).
std::string launcher_across_hosts(const std::vector<std::string>& command,
                                  const std::vector<std::string>& env);

// Fails with a message naming the way that works when launcher_across_hosts() says why.
void refuse_launcher_across_hosts(const std::vector<std::string>& command,
                                  const std::vector<std::string>& env);

}  // namespace ezio::converters
