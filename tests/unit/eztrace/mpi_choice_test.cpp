// SPDX-License-Identifier: GPL-2.0-only
// The application behind an MPI launcher, its MPI from its ELF closure, the MPI module chosen for
// it, and the launcher's command line rewritten so that only the ranks get EZTrace
// (converters/eztrace/mpi_launcher.h, mpi_detect.h).
#include <gtest/gtest.h>

#include "common/error.h"
#include "converters/eztrace/environment.h"
#include "converters/eztrace/mpi_detect.h"
#include "converters/eztrace/mpi_launcher.h"
#include "run.h"

namespace fs = std::filesystem;
using namespace ezio::converters;
using ezio::test::program;

namespace {

const std::vector<std::string> kEnv = {"PATH=/usr/local/bin:/usr/bin:/bin"};

// The modules chosen, but mpiio: added only where its build is found beside the running program
// (eziotrace's, not this test's; the e2e tests check it).
std::vector<std::string> first_two(const std::vector<std::string>& modules) {
  auto names = split_modules(modules);
  names.resize(std::min<size_t>(names.size(), 2));
  return names;
}

TEST(MpiLauncher, EachMpisLauncherIsKnownUnderItsNames) {
  for (const char* w : {"mpiexec.mpich", "mpirun.mpich", "/usr/bin/mpiexec.hydra"}) {
    EXPECT_EQ(launcher_mpi(w, kEnv), "mpich") << w;
  }
  for (const char* w : {"mpirun.openmpi", "mpiexec.openmpi", "orterun"}) {
    EXPECT_EQ(launcher_mpi(w, kEnv), "openmpi") << w;
  }
  EXPECT_EQ(launcher_mpi("true", kEnv), "");
}

TEST(MpiLauncher, TheApplicationIsTheFirstExecutableAfterTheLaunchersOptions) {
  std::string prog = program("mpiio_calls_openmpi");
  EXPECT_EQ(application_of({"mpirun.openmpi", "--allow-run-as-root", "-np", "2", "-x", "A=B",
                            "--mca", "io", "romio321", prog, "/tmp"},
                           kEnv),
            fs::path(prog));
  EXPECT_EQ(application_of({"mpiexec.mpich", "-genv", "A", "B", "-n", "2", "true"}, kEnv),
            fs::path("/usr/bin/true"));
  EXPECT_EQ(application_of({"true", "x"}, kEnv), fs::path("/usr/bin/true"));
  EXPECT_EQ(application_of({"mpirun.openmpi", "-np", "2"}, kEnv), fs::path());
}

TEST(MpiDetect, TheMpiOfAProgramComesFromItsElfClosure) {
  auto mpich = mpi_of_program(program("mpiio_calls_mpich"), kEnv);
  EXPECT_EQ(mpich.mpi, "mpich");
  EXPECT_EQ(mpich.library, "libmpich.so.12");
  auto ompi = mpi_of_program(program("mpiio_calls_openmpi"), kEnv);
  EXPECT_EQ(ompi.mpi, "openmpi");
  EXPECT_EQ(ompi.library, "libmpi.so.40");
  EXPECT_EQ(mpi_of_program("/usr/bin/true", kEnv).mpi, "");
  EXPECT_EQ(mpi_of_program("/etc/passwd", kEnv).mpi, "");
}

// Debian's mpi4py is built against Open MPI: a Python program under a launcher uses it.
TEST(MpiDetect, APythonProgramUsesMpi4pysMpi) {
  auto use = mpi_of_program("/usr/bin/python3", kEnv);
  EXPECT_EQ(use.mpi, "openmpi");
  EXPECT_TRUE(use.via.filename().string().starts_with("MPI.")) << use.via;
  auto modules = modules_for({"posixio"}, {"mpirun.openmpi", "-np", "2", "python3", "x.py"}, kEnv);
  EXPECT_EQ(first_two(modules), (std::vector<std::string>{"posixio", "openmpi"}));
  // Alone, not assumed to be an MPI program.
  EXPECT_EQ(modules_for({"posixio"}, {"python3", "x.py"}, kEnv),
            (std::vector<std::string>{"posixio"}));
}

TEST(MpiChoice, NoMpiModuleNamedGetsTheProgramsAndAnOverrideStays) {
  std::vector<std::string> cmd = {"mpiexec.mpich", "-np", "2", program("mpiio_calls_mpich")};
  EXPECT_EQ(first_two(modules_for({"posixio"}, cmd, kEnv)),
            (std::vector<std::string>{"posixio", "mpich"}));
  // mpiio named: kept, not added again.
  EXPECT_EQ(split_modules(modules_for({"mpiio,posixio"}, cmd, kEnv)),
            (std::vector<std::string>{"mpiio", "posixio", "mpich"}));
  EXPECT_EQ(modules_for({"mpich,posixio"}, cmd, kEnv), (std::vector<std::string>{"mpich,posixio"}));
  EXPECT_EQ(modules_for({"posixio"}, {"true"}, kEnv), (std::vector<std::string>{"posixio"}));
}

// A program run directly that needs no MPI: the MPI modules asked for are left out (EZTrace's
// mpich module makes such a program exit 1 without a trace), the rest kept; only MPI modules is an
// error. A shell is not looked into: unchanged.
TEST(MpiChoice, MpiModulesForAProgramWithoutMpiAreLeftOut) {
  EXPECT_EQ(modules_for({"mpich,mpiio,hdf5", "posixio"}, {"true"}, kEnv),
            (std::vector<std::string>{"hdf5", "posixio"}));
  EXPECT_EQ(modules_for({"mpiio,posixio"}, {"sh", "-c", "true"}, kEnv),
            (std::vector<std::string>{"mpiio,posixio"}));
  try {
    modules_for({"openmpi,mpiio"}, {"true"}, kEnv);
    FAIL() << "no error";
  } catch (const ezio::Error& e) {
    EXPECT_LT(e.exit_code(), 128);
    EXPECT_NE(std::string(e.what()).find("-t openmpi,mpiio: true uses no MPI library"),
              std::string::npos)
        << e.what();
  }
}

TEST(MpiChoice, AnotherMpisModuleIsAnError) {
  std::vector<std::string> cmd = {"mpirun.openmpi", "-np", "2", program("mpiio_calls_openmpi")};
  try {
    modules_for({"mpich,posixio"}, cmd, kEnv);
    FAIL() << "no error";
  } catch (const ezio::Error& e) {
    EXPECT_LT(e.exit_code(), 128);
    EXPECT_NE(std::string(e.what()).find("-t mpich is EZTrace's module for MPICH, but "
                                         "mpiio_calls_openmpi uses Open MPI (libmpi.so.40"),
              std::string::npos)
        << e.what();
  }
}

TEST(MpiLauncher, OnlyTheRanksGetEztracesSettings) {
  EztraceSetup setup;
  setup.env = {"LD_PRELOAD=/a.so:/b.so", "EZTRACE_TRACE=openmpi mpiio"};
  std::vector<std::string> env = kEnv;
  auto cmd = eztrace_command(setup, {"mpirun.openmpi", "-np", "2", "prog"}, env);
  EXPECT_EQ(cmd, (std::vector<std::string>{"mpirun.openmpi", "-x", "LD_PRELOAD=/a.so:/b.so", "-x",
                                           "EZTRACE_TRACE=openmpi mpiio", "-np", "2", "prog"}));
  EXPECT_FALSE(env_value(env, "LD_PRELOAD"));
  EXPECT_EQ(env_value(env, "EZTRACE_TRACE"), "openmpi mpiio");
  env = kEnv;
  cmd = eztrace_command(setup, {"mpiexec.mpich", "-np", "2", "prog"}, env);
  EXPECT_EQ(
      cmd, (std::vector<std::string>{"mpiexec.mpich", "-genv", "LD_PRELOAD", "/a.so:/b.so", "-genv",
                                     "EZTRACE_TRACE", "openmpi mpiio", "-np", "2", "prog"}));
}

}  // namespace
