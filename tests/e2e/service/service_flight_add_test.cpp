// SPDX-License-Identifier: GPL-2.0-only
// Jobs added to and removed from eziotraced's flight recorder while it runs
// (docs/flight-recorder.md, `eziotrace service flight add|remove`): an eziotraced started with no
// job records a cgroup once root adds it, and no more once root removes it; other users are
// refused, and so are cgroups that are not there.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "job_cgroup.h"
#include "service_env.h"

namespace fs = std::filesystem;
using ezio::test::as_user;
using ezio::test::JobCgroup;
using ezio::test::kUserA;
using TestRun = ezio::test::Run;
using nlohmann::json;

namespace {

std::vector<std::string> flight(const std::string& socket, const std::string& verb,
                                const std::string& cgroup,
                                const std::vector<std::string>& extra = {}) {
  std::vector<std::string> argv{EZIO_BINARY, "service", "flight", verb, cgroup, "--socket", socket};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

TestRun snapshot(const std::string& socket, const std::string& job, const fs::path& out) {
  return ezio::test::run(
      {EZIO_BINARY, "snapshot", "--socket", socket, "--job", job, "-o", out.string()});
}

// The jobs STATUS lists, as root sees them.
json jobs(const ezio::test::ServiceDaemon& daemon) { return daemon.status()["flight"]; }

// A refusal: an exit code of an error (not a signal's), with the message asked for on stderr.
void expect_refused(const TestRun& r, const std::string& message) {
  EXPECT_NE(r.status, 0) << r.out;
  EXPECT_LT(r.status, 128);
  EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
}

class FlightAdd : public ezio::test::WithTestUsers {};

TEST_F(FlightAdd, AJobAddedWhileTheServiceRunsIsRecordedUntilRemoved) {
  JobCgroup job("ezio-flight-add", users_->uid(kUserA));
  ezio::test::ServiceDaemon daemon("flight-add");
  EXPECT_TRUE(jobs(daemon).empty());

  TestRun add = ezio::test::run(flight(daemon.socket(), "add", job.path(), {"--seconds", "60"}));
  ASSERT_EQ(add.status, 0) << add.err;
  EXPECT_NE(add.out.find("flight-records job " + job.path() + " (ezio_a's)"), std::string::npos)
      << add.out;
  json listed = jobs(daemon);
  ASSERT_EQ(listed.size(), 1u) << listed.dump();
  EXPECT_EQ(listed[0]["job"], job.path());
  EXPECT_EQ(listed[0]["owner"], kUserA);  // the cgroup's directory's, as --flight decides
  EXPECT_EQ(listed[0]["seconds"], 60.0);
  EXPECT_EQ(listed[0]["added"], true);
  TestRun owners = as_user(kUserA, {EZIO_BINARY, "service", "status", "--socket", daemon.socket()});
  EXPECT_NE(owners.out.find("flight-recorded job " + job.path()), std::string::npos) << owners.out;

  fs::path dir = ezio::test::user_dir(kUserA, "flight-add");
  job.run_as(kUserA, {"/bin/dd", "if=/dev/zero", "of=" + (dir / "added.bin").string(), "bs=4096",
                      "count=8", "conv=fsync", "status=none"});
  fs::path out = ezio::test::scratch_dir("flight-add-root");
  TestRun taken = snapshot(daemon.socket(), job.path(), out / "s");
  ASSERT_EQ(taken.status, 0) << taken.err;
  TestRun files = ezio::test::run({EZIO_BINARY, "files", (out / "s").string()});
  EXPECT_NE(files.out.find("added.bin"), std::string::npos) << files.out;

  // Written otherwise, the same cgroup: the same job.
  std::string again = job.path().substr(1) + "/";
  expect_refused(ezio::test::run(flight(daemon.socket(), "add", again)),
                 "cgroup " + again + " is flight-recorded already (job " + job.path() + ",");

  TestRun removed = ezio::test::run(flight(daemon.socket(), "remove", job.path()));
  ASSERT_EQ(removed.status, 0) << removed.err;
  expect_refused(snapshot(daemon.socket(), job.path(), out / "after"),
                 "flight-records no job " + job.path());
  EXPECT_FALSE(fs::exists(out / "after"));
  EXPECT_TRUE(jobs(daemon).empty());
}

// The job's processes may be other users' than the asker's, and their recording holds the names
// of their files: a member of the service's group, even the cgroup's owner, may neither add a
// job nor remove one.
TEST_F(FlightAdd, OnlyRootMayAddOrRemoveAJob) {
  JobCgroup job("ezio-flight-add-user", users_->uid(kUserA));
  JobCgroup other("ezio-flight-add-other", users_->uid(kUserA));
  ezio::test::ServiceDaemon daemon("flight-add-user", {"--flight", job.path()});
  expect_refused(as_user(kUserA, flight(daemon.socket(), "add", other.path())),
                 "only root may add flight-recorded jobs");
  expect_refused(as_user(kUserA, flight(daemon.socket(), "remove", job.path())),
                 "only root may remove flight-recorded jobs");
  json listed = jobs(daemon);
  ASSERT_EQ(listed.size(), 1u) << listed.dump();
  EXPECT_EQ(listed[0]["job"], job.path());
  EXPECT_EQ(listed[0]["added"], false);
}

TEST_F(FlightAdd, ACgroupThatIsNotThereIsRefusedClearly) {
  ezio::test::ServiceDaemon daemon("flight-add-bad");
  expect_refused(ezio::test::run(flight(daemon.socket(), "add", "/ezio-no-such-cgroup")),
                 "there is no cgroup /ezio-no-such-cgroup");
  expect_refused(ezio::test::run(flight(daemon.socket(), "add", "../etc")),
                 "../etc is not a path under the cgroup v2 mount");
  expect_refused(ezio::test::run(flight(daemon.socket(), "remove", "/ezio-no-such-job")),
                 "flight-records no job /ezio-no-such-job");
  expect_refused(ezio::test::run(flight(daemon.socket(), "add", "/", {"--seconds", "0"})),
                 "--seconds");
  EXPECT_TRUE(jobs(daemon).empty());
  EXPECT_EQ(daemon.status()["sessions"], 0);  // nothing left open by the refusals
}

}  // namespace
