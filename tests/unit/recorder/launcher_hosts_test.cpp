// SPDX-License-Identifier: GPL-2.0-only
// An MPI launcher that would start ranks on other hosts is refused (converters/cluster/
// launcher_hosts.h): inside a Slurm allocation of several nodes, or told a remote bootstrap or
// remote hosts; on one host it goes through. MPICH's and Open MPI's launchers are installed here.
#include "converters/cluster/launcher_hosts.h"

#include <gtest/gtest.h>

#include "common/error.h"
#include "converters/cluster/hydra_step.h"
#include "converters/cluster/orte_step.h"

namespace ezio::converters {
namespace {

using Words = std::vector<std::string>;
const std::vector<std::string> kLocal = {"PATH=/usr/bin:/bin"};

std::vector<std::string> in_job(const std::string& nodes) {
  return {"PATH=/usr/bin:/bin", "SLURM_JOB_ID=42", "SLURM_JOB_NUM_NODES=" + nodes};
}

TEST(LauncherHosts, ALauncherInAnAllocationOfSeveralNodesIsRefused) {
  const std::vector<std::string> hydra = {"mpiexec.hydra", "-bootstrap", "slurm",
                                          "-np",           "4",          "/bin/true"};
  EXPECT_NE(launcher_across_hosts(hydra, kLocal).find("-bootstrap slurm"), std::string::npos);
  const std::vector<std::string> ompi = {"mpirun.openmpi", "-np", "4", "/bin/true"};
  EXPECT_EQ(launcher_across_hosts(ompi, in_job("1")), "");
  EXPECT_NE(launcher_across_hosts(ompi, in_job("2")).find("Slurm job 42 of 2 nodes"),
            std::string::npos);
  try {
    refuse_launcher_across_hosts(ompi, in_job("2"));
    FAIL() << "not refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("eziotrace record -o DIR -- srun"), std::string::npos)
        << e.what();
  }
}

TEST(LauncherHosts, RemoteHostsAreRefusedLocalOnesPass) {
  EXPECT_NE(launcher_across_hosts(
                {"mpirun.mpich", "-hosts", "localhost,node7:2", "-np", "2", "/bin/true"}, kLocal)
                .find("names node7"),
            std::string::npos);
  EXPECT_EQ(launcher_across_hosts(
                {"mpirun.openmpi", "--host", "localhost:4", "-np", "4", "/bin/true"}, kLocal),
            "");
  EXPECT_EQ(launcher_across_hosts({"mpiexec.hydra", "-launcher", "fork", "-np", "2", "/bin/true"},
                                  kLocal),
            "");
}

TEST(LauncherHosts, TheProgramsOwnOptionsAndOtherCommandsAreNotTheLaunchers) {
  EXPECT_EQ(launcher_across_hosts({"mpirun.mpich", "-np", "2", "/bin/true", "-f", "hosts"}, kLocal),
            "");
  EXPECT_EQ(launcher_across_hosts({"/bin/true", "-hosts", "node7"}, in_job("2")), "");
}

// MPICH's launcher starting its proxies through Slurm is recorded (hydra_step.h), not refused.
TEST(LauncherHosts, HydraThroughSlurmIsRecognised) {
  EXPECT_TRUE(
      is_hydra_slurm({"mpiexec.hydra", "-bootstrap", "slurm", "-np", "4", "/bin/true"}, kLocal));
  EXPECT_TRUE(is_hydra_slurm({"mpirun.mpich", "-np", "4", "/bin/true"}, in_job("2")));
  EXPECT_FALSE(is_hydra_slurm({"mpirun.mpich", "-np", "4", "/bin/true"}, in_job("1")));
  EXPECT_FALSE(
      is_hydra_slurm({"mpiexec.hydra", "-bootstrap", "ssh", "-np", "4", "/bin/true"}, in_job("2")));
  EXPECT_FALSE(is_hydra_slurm({"mpirun.openmpi", "-np", "4", "/bin/true"}, in_job("2")));
}

// Open MPI's mpirun in an allocation of several nodes starts its orteds through srun (plm/slurm):
// recorded (orte_step.h). With its own rsh launcher or remote hosts it is not.
TEST(LauncherHosts, OpenMpiThroughSlurmIsRecognised) {
  const std::vector<std::string> ompi = {"mpirun.openmpi", "-np", "4", "/bin/true"};
  EXPECT_TRUE(is_orte_slurm(ompi, in_job("2")));
  EXPECT_FALSE(is_orte_slurm(ompi, in_job("1")));
  EXPECT_FALSE(is_orte_slurm(ompi, kLocal));
  EXPECT_FALSE(is_orte_slurm({"mpirun.openmpi", "--mca", "plm", "rsh", "-np", "4", "/bin/true"},
                             in_job("2")));
  std::vector<std::string> rsh_env = in_job("2");
  rsh_env.push_back("OMPI_MCA_plm=rsh");
  EXPECT_FALSE(is_orte_slurm(ompi, rsh_env));
  EXPECT_FALSE(
      is_orte_slurm({"mpirun.openmpi", "--host", "node7", "-np", "4", "/bin/true"}, in_job("2")));
  EXPECT_FALSE(is_orte_slurm({"mpirun.mpich", "-np", "4", "/bin/true"}, in_job("2")));
  // The program's own options are not mpirun's.
  EXPECT_TRUE(is_orte_slurm({"mpirun.openmpi", "-np", "2", "/bin/true", "--mca", "plm", "rsh"},
                            in_job("2")));
}

TEST(LauncherHosts, OpenMpisLaunchAgentRecordsEachOrtedInTheSession) {
  SlurmStepOptions o;
  o.subcommand = "record";
  o.task_options = {"--layers", "syscall,block"};
  const NodeSession s{"/shared/job.parts", "node1:7000"};
  const std::vector<std::string> agent = orte_agent(o, s, "");
  ASSERT_GE(agent.size(), 9u);
  // mpirun's node's alignment directory, in the environment srun hands the orted, is not its.
  EXPECT_EQ(Words(agent.begin(), agent.begin() + 3),
            (Words{"/usr/bin/env", "-u", "EZIOTRACE_SIDECAR_DIR"}));
  EXPECT_EQ(agent[3], std::string(kSessionEnv) + "=" + session_value(s));
  EXPECT_EQ(agent[5], "record");
  EXPECT_EQ(agent[6], "--layers");
  EXPECT_EQ(agent[agent.size() - 2], "--");
  EXPECT_EQ(agent.back(), "orted");
  const std::vector<std::string> own = orte_agent(o, s, "/opt/ompi/bin/orted  --x");
  EXPECT_EQ(std::vector<std::string>(own.end() - 3, own.end()),
            (std::vector<std::string>{"--", "/opt/ompi/bin/orted", "--x"}));
  // ORTE splits the agent at spaces: a blank in a word would break it, so it is refused.
  EXPECT_THROW(orte_agent(o, {"/shared/my job.parts", "node1:7000"}, ""), Error);
}

// A launch agent on mpirun's command line would replace eziotrace's: refused before anything runs.
TEST(LauncherHosts, OpenMpisLaunchAgentOnTheCommandLineIsRefused) {
  for (const std::vector<std::string>& given :
       {std::vector<std::string>{"--launch-agent", "/opt/orted"},
        std::vector<std::string>{"--mca", "orte_launch_agent", "/opt/orted"}}) {
    SlurmStepOptions o;
    o.subcommand = "record";
    o.record.command = {"mpirun.openmpi"};
    o.record.command.insert(o.record.command.end(), given.begin(), given.end());
    o.record.command.insert(o.record.command.end(), {"-np", "2", "/bin/true"});
    try {
      orte_step_command(o);
      ADD_FAILURE() << "not refused: " << given[0];
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("OMPI_MCA_orte_launch_agent in the environment"),
                std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace ezio::converters
