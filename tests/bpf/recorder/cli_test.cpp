// SPDX-License-Identifier: GPL-2.0-only
// The command line as a user meets it: help texts, the options `run` shares with `record`, and
// `run`'s exit status.
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <sstream>

#include "run.h"

using ezio::test::eziotrace;
using ezio::test::program;

namespace {

// The long option names a subcommand's --help lists ("--layers", "--no-probe-cache", ...).
std::set<std::string> help_options(const std::string& subcommand) {
  auto r = eziotrace({subcommand, "--help"});
  EXPECT_EQ(r.status, 0) << r.err;
  std::set<std::string> names;
  static const std::regex option(R"(^  (?:-\w,)?(--[\w-]+))");
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, option)) names.insert(m[1]);
  }
  return names;
}

TEST(Cli, TopLevelUsageNamesTheProgram) {
  auto r = eziotrace({"--help"});
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("\nUsage: eziotrace [OPTIONS] SUBCOMMAND"), std::string::npos) << r.out;
}

// All but --eztrace-alignment: run merges at once and always has the alignment data.
TEST(Cli, RunTakesEveryOptionOfRecord) {
  std::set<std::string> record = help_options("record");
  std::set<std::string> run = help_options("run");
  ASSERT_TRUE(record.count("--layers")) << "record --help lists no --layers";
  ASSERT_TRUE(record.count("--eztrace-alignment")) << "record --help lists no --eztrace-alignment";
  record.erase("--eztrace-alignment");
  // A host's part of a multi-node job is recorded by `record` (docs/cluster.md), not `run`.
  record.erase("--clock-ref");
  for (const auto& name : record) EXPECT_TRUE(run.count(name)) << "run --help lacks " << name;
}

// `run --eztrace-alignment` would mean nothing: run does not list it and refuses it (a usage
// error naming the option), before anything runs.
TEST(Cli, RunHasNoEztraceAlignmentOption) {
  std::set<std::string> run = help_options("run");
  ASSERT_TRUE(run.count("--layers")) << "run --help lists no --layers";
  EXPECT_FALSE(run.count("--eztrace-alignment")) << "run --help lists --eztrace-alignment";
  auto dir = ezio::test::scratch_dir("cli-run-alignment");
  auto out = dir / "merged";
  auto r = eziotrace({"run", "--eztrace-alignment", "-o", out.string(), "--", "true"});
  EXPECT_NE(r.status, 0) << r.err;
  EXPECT_LT(r.status, 128) << r.err;
  EXPECT_NE(r.err.find("--eztrace-alignment"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(out));
}

// `run --layers syscall` takes "syscall" as the option's value, not as the command.
TEST(Cli, RunSplitsTheValueOfEverySharedOption) {
  auto r = eziotrace({"run", "--layers", "nosuchlayer", "--", "true"});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("nosuchlayer"), std::string::npos) << r.err;
}

// The merge's alignment check fails (a user write with no write system call inside): `run`
// exits 3, as `eziotrace merge` does, and the archive is there and says so.
TEST(Cli, RunExitsThreeOnAlignmentViolations) {
  auto dir = ezio::test::scratch_dir("cli-violations");
  auto out = dir / "merged";
  auto r = eziotrace({"-o", out.string(), "--", program("nosyscall_write")});
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_NE(r.err.find("contains no write system call"), std::string::npos) << r.err;
  EXPECT_TRUE(std::filesystem::exists(out / "eziotrace.otf2"));
}

// The application's own failure comes first: its exit status is passed on.
TEST(Cli, RunPassesOnTheApplicationsExitStatus) {
  auto dir = ezio::test::scratch_dir("cli-status");
  auto r = eziotrace({"-o", (dir / "merged").string(), "--", "sh", "-c", "exit 7"});
  EXPECT_EQ(r.status, 7) << r.err;
}

}  // namespace
