// SPDX-License-Identifier: GPL-2.0-only
// The command lines of a job started by an MPI launcher across nodes (docs/cluster.md, "MPI
// launchers across hosts"): hydra's bootstrap puts each node's recording before its proxy in
// hydra's srun line, Open MPI's mpirun runs as this node's task with the recording launch agent;
// with `run`, the ranks alone get EZTrace, writing the job's one EZTrace archive, and each node's
// recording collects its own ranks' alignment data (converters/cluster/launcher_ranks.h). No
// cluster needed: srun is a stand-in that prints its arguments.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "converters/cluster/hydra_step.h"
#include "converters/cluster/launcher_ranks.h"
#include "converters/cluster/orte_step.h"
#include "converters/cluster/user_layers.h"
#include "converters/eztrace/environment.h"

namespace fs = std::filesystem;

namespace ezio::converters {
namespace {

using Words = std::vector<std::string>;

const NodeSession kSession{"/shared/job.parts", "node1:7000"};

bool has(const Words& w, const std::string& word) {
  return std::find(w.begin(), w.end(), word) != w.end();
}

// The value after `option name` (-genv NAME VALUE) or of `option NAME=VALUE` (-x), "" if none.
std::string rank_setting(const Words& cmd, const std::string& option, const std::string& name) {
  for (size_t i = 0; i + 1 < cmd.size(); ++i) {
    if (cmd[i] != option) continue;
    if (cmd[i + 1] == name && i + 2 < cmd.size()) return cmd[i + 2];
    if (cmd[i + 1].starts_with(name + "=")) return cmd[i + 1].substr(name.size() + 1);
  }
  return "";
}

bool mentions(const Words& cmd, const std::string& text) {
  return std::any_of(cmd.begin(), cmd.end(),
                     [&](const std::string& w) { return w.find(text) != std::string::npos; });
}

// What `sh bootstrap ARGS...` hands srun, one word a line, with a stand-in srun on PATH.
Words run_bootstrap(const fs::path& dir, const fs::path& bootstrap, const std::string& args,
                    int& status) {
  const fs::path srun = dir / "srun";
  std::ofstream(srun) << "#!/bin/sh\nfor a do printf '%s\\n' \"$a\"; done\n";
  fs::permissions(srun, fs::perms::owner_all);
  const std::string line = "PATH=" + dir.string() + ":/usr/bin:/bin sh " + bootstrap.string() +
                           " " + args + " 2>/dev/null";
  FILE* p = popen(line.c_str(), "r");
  Words out;
  char buf[4096];
  while (p && fgets(buf, sizeof buf, p)) {
    std::string w(buf);
    if (!w.empty() && w.back() == '\n') w.pop_back();
    out.push_back(w);
  }
  status = p ? WEXITSTATUS(pclose(p)) : -1;
  return out;
}

SlurmStepOptions options(const std::string& sub, Words command) {
  setenv("EZIOTRACE_PRELOAD_HELPER", EZIO_PRELOAD_HELPER, 1);  // the build's, not an install's
  SlurmStepOptions o;
  o.subcommand = sub;
  o.task_options = {"--layers", "syscall,block"};
  o.record.command = std::move(command);
  return o;
}

TEST(LauncherStep, HydrasBootstrapRecordsEachProxyInTheSession) {
  PrivateDir tmp("launcher-step-test");
  const fs::path script = tmp.path() / "bootstrap";
  const SlurmStepOptions o = options("record", {"mpiexec.hydra", "-np", "4", "/bin/true"});
  const Words cmd = hydra_launch(o, kSession, script, tmp.path() / "work");
  EXPECT_EQ(cmd, (Words{"mpiexec.hydra", "-bootstrap", "slurm", "-bootstrap-exec", script.string(),
                        "-np", "4", "/bin/true"}));
  int status = 0;
  const Words srun =
      run_bootstrap(tmp.path(), script,
                    "--nodelist n1,n2 -N 2 -n 2 --input none /usr/bin/hydra_pmi_proxy "
                    "--control-port node1:1234",
                    status);
  EXPECT_EQ(status, 0);
  ASSERT_EQ(srun.size(), 18u) << ::testing::PrintToString(srun);
  EXPECT_EQ(Words(srun.begin(), srun.begin() + 9), (Words{"--nodelist", "n1,n2", "-N", "2", "-n",
                                                          "2", "--input", "none", "/usr/bin/env"}));
  EXPECT_EQ(srun[9], std::string(kSessionEnv) + "=" + session_value(kSession));  // quotes kept
  EXPECT_EQ(Words(srun.begin() + 11, srun.end()),
            (Words{"record", "--layers", "syscall,block", "--", "/usr/bin/hydra_pmi_proxy",
                   "--control-port", "node1:1234"}));
  // A line without the proxy would run it unrecorded: refused.
  EXPECT_TRUE(run_bootstrap(tmp.path(), script, "-N 2 hostname", status).empty());
  EXPECT_EQ(status, 1);
}

// `run`: hydra's srun line records each proxy with its ranks' alignment data; the ranks get
// EZTrace through -genv, the job's EZTrace directory, and no alignment directory of this host.
TEST(LauncherStep, HydraInRunGivesTheRanksEztrace) {
  PrivateDir tmp("launcher-step-test");
  const fs::path script = tmp.path() / "bootstrap";
  SlurmStepOptions o =
      options("run", {"mpiexec.hydra", "-bootstrap", "slurm", "-np", "4", "/bin/true"});
  o.rank_modules = {"posixio"};
  const Words cmd = hydra_launch(o, kSession, script, tmp.path() / "work");
  EXPECT_EQ(Words(cmd.begin(), cmd.begin() + 3),
            (Words{"mpiexec.hydra", "-bootstrap-exec", script.string()}));
  EXPECT_EQ(Words(cmd.end() - 5, cmd.end()),
            (Words{"-bootstrap", "slurm", "-np", "4", "/bin/true"}));
  const std::string trace_dir = (kSession.parts / kJobEztraceDir).string();
  EXPECT_EQ(rank_setting(cmd, "-genv", "EZTRACE_TRACE_DIR"), trace_dir);
  EXPECT_EQ(rank_setting(cmd, "-genv", "EZTRACE_TRACE"), "posixio");
  EXPECT_NE(rank_setting(cmd, "-genv", "LD_PRELOAD").find("libeztrace-lib"), std::string::npos);
  EXPECT_FALSE(mentions(cmd, "EZIOTRACE_SIDECAR_DIR"));
  int status = 0;
  const Words srun =
      run_bootstrap(tmp.path(), script, "-N 2 --input none hydra_pmi_proxy --x", status);
  EXPECT_EQ(status, 0);
  const auto record = std::find(srun.begin(), srun.end(), "record");
  ASSERT_NE(record, srun.end()) << ::testing::PrintToString(srun);
  EXPECT_EQ(Words(record, srun.end()),
            (Words{"record", "--layers", "syscall,block", "--eztrace-alignment", "--",
                   "hydra_pmi_proxy", "--x"}));
}

TEST(LauncherStep, OpenMpiInRunGivesTheRanksEztraceAndEachNodeItsAlignmentData) {
  PrivateDir tmp("launcher-step-test");
  SlurmStepOptions o = options("run", {"mpirun.openmpi", "-np", "4", "/bin/true"});
  o.rank_modules = {"posixio"};
  const Words cmd = orte_launch(o, kSession, "", tmp.path() / "work");
  ASSERT_GE(cmd.size(), 10u);
  EXPECT_EQ(cmd[0], "/usr/bin/env");
  const std::string agent = cmd[1];
  EXPECT_TRUE(
      agent.starts_with("OMPI_MCA_orte_launch_agent=/usr/bin/env -u EZIOTRACE_SIDECAR_DIR "
                        "EZIOTRACE_SESSION="))
      << agent;
  EXPECT_TRUE(agent.ends_with(" record --layers syscall,block --eztrace-alignment -- orted"))
      << agent;
  EXPECT_EQ(cmd[2], std::string(kSessionEnv) + "=" + session_value(kSession));
  const auto record = std::find(cmd.begin(), cmd.end(), "record");
  ASSERT_NE(record, cmd.end());
  EXPECT_EQ(Words(record, record + 6), (Words{"record", "--layers", "syscall,block",
                                              "--eztrace-alignment", "--", "mpirun.openmpi"}));
  EXPECT_EQ(rank_setting(cmd, "-x", "EZTRACE_TRACE_DIR"),
            (kSession.parts / kJobEztraceDir).string());
  EXPECT_NE(rank_setting(cmd, "-x", "LD_PRELOAD").find("libeztrace-lib"), std::string::npos);
  EXPECT_FALSE(has(cmd, "-genv"));
  EXPECT_EQ(rank_setting(cmd, "-x", "EZIOTRACE_SIDECAR_DIR"), "");
  EXPECT_EQ(Words(cmd.end() - 3, cmd.end()), (Words{"-np", "4", "/bin/true"}));
}

TEST(LauncherStep, OpenMpiInRecordLeavesMpirunsCommandAsItIs) {
  PrivateDir tmp("launcher-step-test");
  const SlurmStepOptions o = options("record", {"mpirun.openmpi", "-np", "4", "/bin/true"});
  const Words cmd = orte_launch(o, kSession, "", tmp.path() / "work");
  EXPECT_EQ(Words(cmd.end() - 8, cmd.end()), (Words{"record", "--layers", "syscall,block", "--",
                                                    "mpirun.openmpi", "-np", "4", "/bin/true"}));
  EXPECT_FALSE(has(cmd, "-x"));
  EXPECT_FALSE(has(cmd, "--eztrace-alignment"));
}

}  // namespace
}  // namespace ezio::converters
