// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// `eziotrace [options] -o DIR -- srun [srun options] program [args...]` inside a Slurm allocation:
// Slurm starts every task, as `eziotrace record|run [options] -- program [args...]`, with the job's
// session in its environment (node_session.h); each records its rank through its node's
// eziotraced into DIR.parts/<host> with its clock offset to this host, measured against the clock
// server this process runs meanwhile. When srun returns, the parts are merged as `merge-hosts`
// does into DIR (docs/cluster.md, "How the remote ranks get recorded").
#include <functional>
#include <string>
#include <vector>

#include "converters/cluster/node_session.h"
#include "recorder/session/record.h"

namespace ezio::converters {

struct SlurmStepOptions {
  recorder::RecordOptions record;         // output, force, command (srun ...)
  std::string subcommand;                 // what each task runs: "record" or "run"
  std::vector<std::string> task_options;  // the options each task's eziotrace is given
  double part_wait_s = 30;  // how long a part may still be written after srun returned
  // `run` through an MPI launcher (launcher_ranks.h): the EZTrace modules (-t) of its ranks.
  std::vector<std::string> rank_modules = {};
};

struct StepEnd {
  int status = 0;           // the command's exit status
  std::string interrupted;  // the signal this process received before a failed end, or ""
};

// Runs cmd (srun, or an MPI launcher that starts srun) to its end. SIGINT, SIGTERM and SIGHUP sent
// to this process are handed to it as they are, so srun's own rules apply (one SIGINT prints the
// tasks' state, two within a second cancel the step, SIGTERM is passed to the tasks); a
// terminal's Ctrl-C reaches it by itself (same process group) and is not sent twice.
StepEnd run_step(const std::vector<std::string>& cmd);

// `env EZIOTRACE_SESSION=... eziotrace SUB [task options] --`: the words before a task's own
// command that record it into session, through env so that the session reaches it whatever the
// launcher passes of the environment.
std::vector<std::string> task_recording(const SlurmStepOptions& o, const NodeSession& session);

// Runs the step, merges its parts, sets the command's status: srun's when it failed, else 4 when
// a host's part is missing (the archive says which and why), else 0.
void slurm_step_command(const SlurmStepOptions& o);

// What slurm_step_command does around its srun line, for any command `step` builds from the
// job's session (DIR.parts, this process's clock server) whose tasks record into it: run it,
// wait for the parts, merge them into DIR (named after `program` when -o names none), set the
// command's status.
void session_step_command(const SlurmStepOptions& o, const std::string& program,
                          const std::function<std::vector<std::string>(const NodeSession&)>& step);

}  // namespace ezio::converters
