// SPDX-License-Identifier: GPL-2.0-only
// The preload helper's launcher re-exec (converters/eztrace/preload/launcher_reexec.c): a program
// whose real name is an MPI launcher's, started with EZTrace preloaded, runs again with EZTrace
// handed to its ranks by the launcher's own option and without LD_PRELOAD itself. A copy of
// echo under the launcher's name shows the command line it was re-executed with.
#include <gtest/gtest.h>

#include "run.h"

namespace fs = std::filesystem;

namespace {

const std::string kEztrace = "/usr/lib/x86_64-linux-gnu/libeztrace-lib.so";

std::string run_as(const std::string& name, const std::string& preload) {
  fs::path dir = ezio::test::scratch_dir("launcher-reexec");
  fs::copy_file("/usr/bin/echo", dir / name, fs::copy_options::overwrite_existing);
  auto r = ezio::test::run(
      {(dir / name).string(), "-np", "2", "prog"},
      {"LD_PRELOAD=" + preload, "EZTRACE_TRACE=posixio", "EZTRACE_TRACE_DIR=" + dir.string()});
  EXPECT_EQ(r.status, 0) << r.err;
  return r.out;
}

TEST(LauncherReexec, EztraceInAnOpenMpiOrMpichLauncherGoesToItsRanksOnly) {
  ASSERT_TRUE(fs::exists(kEztrace)) << "libeztrace-dev is missing (scripts/setup.sh)";
  std::string helper = (fs::path(EZIO_BINARY).parent_path() / "libeziotrace-preload.so").string();
  ASSERT_TRUE(fs::exists(helper));
  std::string preload = kEztrace + ":" + helper;
  EXPECT_EQ(run_as("orterun", preload),
            "-x LD_PRELOAD=" + preload + " -x EZTRACE_TRACE -x EZTRACE_TRACE_DIR -np 2 prog\n");
  EXPECT_EQ(run_as("mpiexec.hydra", preload), "-genv LD_PRELOAD " + preload + " -np 2 prog\n");
}

}  // namespace
