// SPDX-License-Identifier: GPL-2.0-only
// The preload helper's MPI_Finalize (converters/eztrace/preload/mpi_finalize.c), run against a
// fake MPICH that says each call instead of doing it (tests/programs/fake_mpich.c): under
// EZTrace's MPI module, a barrier on MPICH's MPI_COMM_WORLD, then a 200 ms pause, then MPICH's
// MPI_Finalize; without EZTrace's module, MPICH's MPI_Finalize alone. merge-e2e.FinalizeTcp runs
// the real job but cannot tell a missing barrier from MPICH's rarer race (its comment says why):
// this is what fails when the helper's steps go.
#include <gtest/gtest.h>

#include "run.h"

namespace fs = std::filesystem;
using ezio::test::program;

namespace {

std::string helper() {
  return (fs::path(EZIO_BINARY).parent_path() / "libeziotrace-preload.so").string();
}

std::string finalize_with(const std::string& preload) {
  EXPECT_TRUE(fs::exists(helper()));
  auto r = ezio::test::run({program("finalize_probe")}, {"LD_PRELOAD=" + preload});
  EXPECT_EQ(r.status, 0) << r.err;
  return r.out;
}

TEST(HelperFinalize, UnderEztracesMpiModuleABarrierAndAPauseComeBeforeMpichsFinalize) {
  EXPECT_EQ(finalize_with(program("libfake_ezt_mpi.so") + ":" + helper()),
            "barrier 0x44000000\npause 200000000 ns\nfinalize\n");
}

TEST(HelperFinalize, WithoutEztracesMpiModuleMpichsFinalizeIsCalledAlone) {
  EXPECT_EQ(finalize_with(helper()), "finalize\n");
}

}  // namespace
