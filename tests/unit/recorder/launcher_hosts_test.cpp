// SPDX-License-Identifier: GPL-2.0-only
// An MPI launcher that would start ranks on other hosts is refused (converters/cluster/
// launcher_hosts.h): inside a Slurm allocation of several nodes, or told a remote bootstrap or
// remote hosts; on one host it goes through. MPICH's and Open MPI's launchers are installed here.
#include "converters/cluster/launcher_hosts.h"

#include <gtest/gtest.h>

#include "common/error.h"
#include "converters/cluster/hydra_step.h"

namespace ezio::converters {
namespace {

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

}  // namespace
}  // namespace ezio::converters
