// SPDX-License-Identifier: GPL-2.0-only
#include "converters/cluster/srun_line.h"

#include <algorithm>
#include <filesystem>
#include <set>
#include <string_view>

#include "common/error.h"

namespace ezio::converters {
namespace {

// The options of srun(1) (Slurm 22.05) whose value is required, hence may be the next word.
// Options with an optional value (--exclusive[=..], -I[..], -K[..]) take it only after '='.
constexpr std::string_view kShortWithValue = "ABCDFGJLMNSTWbcdeimnopqrtwx";
const std::set<std::string_view>& long_with_value() {
  static const std::set<std::string_view> names = {"accel-bind",
                                                   "account",
                                                   "acctg-freq",
                                                   "bb",
                                                   "bbf",
                                                   "bcast-exclude",
                                                   "begin",
                                                   "chdir",
                                                   "cluster-constraint",
                                                   "clusters",
                                                   "comment",
                                                   "constraint",
                                                   "container",
                                                   "core-spec",
                                                   "cores-per-socket",
                                                   "cpu-bind",
                                                   "cpu-freq",
                                                   "cpus-per-gpu",
                                                   "cpus-per-task",
                                                   "deadline",
                                                   "delay-boot",
                                                   "dependency",
                                                   "distribution",
                                                   "epilog",
                                                   "error",
                                                   "exclude",
                                                   "export",
                                                   "extra-node-info",
                                                   "gid",
                                                   "gpu-bind",
                                                   "gpu-freq",
                                                   "gpus-per-node",
                                                   "gpus-per-socket",
                                                   "gpus-per-task",
                                                   "gpus",
                                                   "gres-flags",
                                                   "gres",
                                                   "het-group",
                                                   "hint",
                                                   "input",
                                                   "job-name",
                                                   "jobid",
                                                   "licenses",
                                                   "mail-type",
                                                   "mail-user",
                                                   "mcs-label",
                                                   "mem-bind",
                                                   "mem-per-cpu",
                                                   "mem-per-gpu",
                                                   "mem",
                                                   "mincpus",
                                                   "mpi",
                                                   "msg-timeout",
                                                   "network",
                                                   "nodefile",
                                                   "nodelist",
                                                   "nodes",
                                                   "ntasks-per-core",
                                                   "ntasks-per-gpu",
                                                   "ntasks-per-node",
                                                   "ntasks-per-socket",
                                                   "ntasks",
                                                   "open-mode",
                                                   "output",
                                                   "partition",
                                                   "power",
                                                   "prefer",
                                                   "priority",
                                                   "profile",
                                                   "prolog",
                                                   "qos",
                                                   "relative",
                                                   "reservation",
                                                   "signal",
                                                   "slurmd-debug",
                                                   "sockets-per-node",
                                                   "switches",
                                                   "task-epilog",
                                                   "task-prolog",
                                                   "thread-spec",
                                                   "threads-per-core",
                                                   "threads",
                                                   "time-min",
                                                   "time",
                                                   "tmp",
                                                   "uid",
                                                   "wait",
                                                   "wckey"};
  return names;
}

}  // namespace

size_t srun_option_words(const std::string& word) {
  if (word.starts_with("--")) {
    if (word.find('=') != std::string::npos) return 1;
    if (word == "--multi-prog")
      fail(
          "srun --multi-prog: the tasks' programs are in a configuration file; eziotrace records "
          "one program per step (write the step without --multi-prog)");
    return long_with_value().contains(std::string_view(word).substr(2)) ? 2 : 1;
  }
  // Short options may be grouped (-lN 2): the first one that takes a value ends the group.
  for (size_t i = 1; i < word.size(); ++i) {
    if (kShortWithValue.find(word[i]) != std::string_view::npos)
      return i + 1 == word.size() ? 2 : 1;
  }
  return 1;
}

bool is_srun(const std::vector<std::string>& command) {
  return !command.empty() && std::filesystem::path(command.front()).filename() == "srun";
}

size_t walk_srun_options(const std::vector<std::string>& command,
                         const std::function<size_t(const std::string&)>& words,
                         const std::function<void(size_t, size_t)>& option) {
  size_t i = 1;
  while (i < command.size()) {
    const std::string& w = command[i];
    if (w == "--") {
      option(i, 1);
      return i + 1;
    }
    if (w.size() < 2 || w[0] != '-') break;
    const size_t n = std::min(words(w), command.size() - i);
    option(i, n);
    i += n;
  }
  return std::min(i, command.size());
}

SrunLine split_srun(const std::vector<std::string>& command) {
  SrunLine line;
  line.launcher.push_back(command.at(0));
  const size_t i = walk_srun_options(command, srun_option_words, [&](size_t first, size_t n) {
    line.launcher.insert(line.launcher.end(), command.begin() + long(first),
                         command.begin() + long(first + n));
  });
  line.program.assign(command.begin() + long(i), command.end());
  if (line.program.empty()) fail("{}: no program for the tasks to run", command.front());
  if (std::find(line.program.begin(), line.program.end(), ":") != line.program.end())
    fail("srun ... : ...: a heterogeneous step is not recorded yet (one program per step)");
  return line;
}

}  // namespace ezio::converters
