// SPDX-License-Identifier: GPL-2.0-only
// `eziotrace -- srun ...` without a cluster (docs/cluster.md): where srun's options end, the job's
// session carried in the environment, and the clock server the submitting eziotrace runs on a
// port of the kernel's choice until it is stopped.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <thread>

#include "common/error.h"
#include "converters/cluster/node_session.h"
#include "converters/cluster/srun_line.h"
#include "recorder/core/clock_sync.h"

namespace ezio::converters {
namespace {

using Words = std::vector<std::string>;

TEST(SlurmStep, SrunIsRecognisedByItsFileName) {
  EXPECT_TRUE(is_srun({"srun", "-N", "2", "./app"}));
  EXPECT_TRUE(is_srun({"/usr/bin/srun", "./app"}));
  EXPECT_FALSE(is_srun({"./srunner"}));
  EXPECT_FALSE(is_srun({"mpirun", "srun"}));
}

TEST(SlurmStep, SrunOptionsAndTheirValuesStayWithSrun) {
  SrunLine l = split_srun({"srun", "-N", "2", "-n2", "--mpi=pmi2", "--ntasks-per-node", "1", "-l",
                           "--exclusive", "-lw", "node1", "./app", "-N", "3"});
  EXPECT_EQ(l.launcher, (Words{"srun", "-N", "2", "-n2", "--mpi=pmi2", "--ntasks-per-node", "1",
                               "-l", "--exclusive", "-lw", "node1"}));
  EXPECT_EQ(l.program, (Words{"./app", "-N", "3"}));
}

TEST(SlurmStep, DoubleDashEndsSrunsOptions) {
  SrunLine l = split_srun({"srun", "-N", "2", "--", "-weird-program", "x"});
  EXPECT_EQ(l.launcher, (Words{"srun", "-N", "2", "--"}));
  EXPECT_EQ(l.program, (Words{"-weird-program", "x"}));
}

TEST(SlurmStep, WhatOneRecordingPerTaskCannotFollowIsRefused) {
  EXPECT_THROW(split_srun({"srun", "-N", "2"}), Error);
  EXPECT_THROW(split_srun({"srun", "--multi-prog", "tasks.conf"}), Error);
  EXPECT_THROW(split_srun({"srun", "-n1", "./a", ":", "-n1", "./b"}), Error);
}

TEST(SlurmStep, SessionTravelsThroughTheEnvironmentAndIsTakenOut) {
  const NodeSession s{"/shared/run.parts", "node1:40000"};
  ASSERT_EQ(setenv(kSessionEnv, session_value(s).c_str(), 1), 0);
  auto got = take_node_session();
  ASSERT_TRUE(got);
  EXPECT_EQ(got->parts, s.parts);
  EXPECT_EQ(got->clock_ref, s.clock_ref);
  EXPECT_EQ(getenv(kSessionEnv), nullptr);  // the application does not inherit it
  EXPECT_FALSE(take_node_session());
  setenv(kSessionEnv, "not json", 1);
  EXPECT_THROW(take_node_session(), Error);
  setenv(kSessionEnv, R"({"parts":"relative","clock_ref":"n:1"})", 1);
  EXPECT_THROW(take_node_session(), Error);
}

TEST(SlurmStep, PartIsNamedByHostThenLocalTaskId) {
  const NodeSession s{"/p", "h:1"};
  unsetenv("SLURM_LOCALID");
  const std::string host = part_path(s).filename().string();
  EXPECT_FALSE(host.empty());
  setenv("SLURM_LOCALID", "0", 1);
  EXPECT_EQ(part_path(s).filename().string(), host);
  setenv("SLURM_LOCALID", "3", 1);
  EXPECT_EQ(part_path(s).filename().string(), host + ".3");
  unsetenv("SLURM_LOCALID");
}

TEST(SlurmStep, ClockServerOnAFreePortServesClientsUntilStopped) {
  recorder::ClockServer server(0);
  ASSERT_NE(server.port(), 0);
  std::thread serving([&server] { server.serve(); });
  for (int i = 0; i < 2; ++i) {  // any number of clients, one after the other
    auto o = recorder::measure_clock("127.0.0.1", server.port(), 20, 5);
    EXPECT_EQ(o.rounds, 20u);
    EXPECT_LE(std::abs(o.offset_ns), o.error_ns + 1);  // the same clock
  }
  server.stop();
  serving.join();
}

}  // namespace
}  // namespace ezio::converters
