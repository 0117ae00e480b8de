// SPDX-License-Identifier: GPL-2.0-only
// eziotraced --flight-slurm end to end without Slurm (docs/flight-recorder.md): the Slurm root is
// a cgroup of the test's own, whose job_<id> cgroups the test makes and removes as slurmd does, and
// scontrol is tests/support/fake_scontrol.sh (--flight-slurm-scontrol), which answers for a job
// once the test writes its answer file. The service never waits for scontrol: a job is pending
// until it answers, then recorded as its user's, or refused with why; a job gone first is
// cancelled. No scontrol child is left running, nor a zombie.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "job_cgroup.h"
#include "service_env.h"

namespace ezio::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using TestRun = Run;  // a test's own Run() hides the type in its body

constexpr char kFakeScontrol[] = EZIO_TEST_SUPPORT_DIR "/fake_scontrol.sh";

// The children of the daemon's loop, which runs scontrol (zombies included).
std::vector<pid_t> children_of(pid_t pid) {
  std::ifstream in(fmt::format("/proc/{}/task/{}/children", pid, pid));
  std::vector<pid_t> kids;
  for (pid_t k; in >> k;) kids.push_back(k);
  return kids;
}

// A fake Slurm node: its cgroup root (--flight-slurm's), the fake scontrol's answers, and an
// eziotraced following them.
class FlightSlurm : public WithTestUsers {
 protected:
  void start(const std::string& name, const std::vector<std::string>& extra = {}) {
    root_ = std::make_unique<JobCgroup>("ezio-fake-slurm-" + name, 0);
    answers_ = scratch_dir("fake-scontrol-" + name);
    setenv("FAKE_SCONTROL_DIR", answers_.c_str(), 1);  // the daemon's, and so scontrol's
    std::vector<std::string> argv{"--flight-slurm", root_->path(), "--flight-slurm-scontrol",
                                  kFakeScontrol};
    argv.insert(argv.end(), extra.begin(), extra.end());
    daemon_ = std::make_unique<ServiceDaemon>("flight-slurm-" + name, argv);
  }
  void TearDown() override {
    jobs_.clear();  // the jobs' cgroups first, then the daemon, then the root
    daemon_.reset();
    root_.reset();
    unsetenv("FAKE_SCONTROL_DIR");
  }
  // Slurm job id's cgroup comes, owned by its user as slurmd makes it.
  void job_comes(const std::string& id, uid_t owner) {
    jobs_[id] = std::make_unique<JobCgroup>(root_->path().substr(1) + "/job_" + id, owner);
  }
  void job_goes(const std::string& id) { jobs_.erase(id); }
  std::string job_path(const std::string& id) const { return root_->path() + "/job_" + id; }
  // scontrol's answer for job id (a uid, "fail" or "garbage": fake_scontrol.sh), written whole.
  void answer(const std::string& id, const std::string& text) {
    std::ofstream(answers_ / (id + ".tmp")) << text << "\n";
    fs::rename(answers_ / (id + ".tmp"), answers_ / id);
  }
  json slurm() const { return daemon_->status()["flight_slurm"]; }
  bool pending(const std::string& id) const {
    json p = slurm()["pending_now"];
    return std::find(p.begin(), p.end(), "job_" + id) != p.end();
  }
  json flight_job(const std::string& id) const {
    json status = daemon_->status();
    for (const json& j : status["flight"]) {
      if (j.value("job", "") == job_path(id)) return j;
    }
    return json();
  }
  // Nothing left of the jobs' starts: no slot held, no scontrol running or unreaped.
  void expect_nothing_left() const {
    json s = slurm();
    EXPECT_EQ(s["starting"], 0) << s.dump();
    EXPECT_EQ(s["scontrol_children"], 0) << s.dump();
    EXPECT_EQ(s["pending"], 0) << s.dump();
    EXPECT_TRUE(children_of(daemon_->pid()).empty()) << "a child of eziotraced is left";
  }
  TestRun service_status() const {
    return run({EZIO_BINARY, "service", "status", "--socket", daemon_->socket()});
  }

  std::unique_ptr<JobCgroup> root_;
  fs::path answers_;
  std::unique_ptr<ServiceDaemon> daemon_;
  std::map<std::string, std::unique_ptr<JobCgroup>> jobs_;
};

TEST_F(FlightSlurm, AJobIsPendingWhileScontrolThinksThenRecordedAsItsUsers) {
  start("pending");
  job_comes("90001", users_->uid(kUserB));  // its cgroup's owner is not its user: scontrol says
  ASSERT_TRUE(wait_for([&] { return pending("90001"); })) << slurm().dump();
  ASSERT_EQ(children_of(daemon_->pid()).size(), 1u) << "scontrol asked";
  // The service answers meanwhile, and says the job is pending.
  TestRun st = service_status();
  ASSERT_EQ(st.status, 0) << st.err;
  EXPECT_NE(st.out.find("Slurm jobs pending (their user asked from scontrol, or their ring being "
                        "made): 90001"),
            std::string::npos)
      << st.out;
  EXPECT_TRUE(flight_job("90001").is_null()) << "not recorded before its user is known";

  answer("90001", std::to_string(users_->uid(kUserA)));
  ASSERT_TRUE(wait_for([&] { return !flight_job("90001").is_null(); })) << slurm().dump();
  json j = flight_job("90001");
  EXPECT_EQ(j["owner"], kUserA) << j.dump();
  json s = slurm();
  EXPECT_EQ(s["recorded"], 1) << s.dump();
  EXPECT_EQ(s["added"], 1) << s.dump();
  EXPECT_EQ(s["refused"], 0) << s.dump();
  expect_nothing_left();
  // Its user's processes in it are recorded; the user sees the job, another does not.
  fs::path dir = user_dir(kUserA, "flight-slurm");
  jobs_["90001"]->run_as(kUserA, {"/bin/dd", "if=/dev/zero", "of=" + (dir / "w.bin").string(),
                                  "bs=4096", "count=8", "conv=fsync", "status=none"});
  EXPECT_TRUE(wait_for([&] { return flight_job("90001").value("events", 0ull) > 0; }));
  TestRun mine = as_user(kUserA, {EZIO_BINARY, "service", "status", "--socket", daemon_->socket()});
  EXPECT_NE(mine.out.find("flight-recorded job " + job_path("90001") + " (ezio_a's)"),
            std::string::npos)
      << mine.out << mine.err;
  TestRun theirs =
      as_user(kUserB, {EZIO_BINARY, "service", "status", "--socket", daemon_->socket()});
  EXPECT_EQ(theirs.out.find("flight-recorded job " + job_path("90001")), std::string::npos)
      << theirs.out;
  // Gone, it is removed.
  job_goes("90001");
  EXPECT_TRUE(wait_for([&] { return slurm()["removed"] == 1; })) << slurm().dump();
  EXPECT_TRUE(flight_job("90001").is_null());
}

TEST_F(FlightSlurm, AJobScontrolFailsOnOrNamesNoUserForIsRefusedWithWhy) {
  start("refused");
  answer("90002", "fail");
  answer("90003", "garbage");
  job_comes("90002", users_->uid(kUserA));
  job_comes("90003", users_->uid(kUserA));
  ASSERT_TRUE(wait_for([&] { return slurm()["refused"] == 2; })) << slurm().dump();
  json why = slurm()["refused_why"];
  std::string failed = why.value("job_90002", ""), garbage = why.value("job_90003", "");
  EXPECT_NE(failed.find("its user is not known"), std::string::npos) << failed;
  EXPECT_NE(failed.find("failed, exit status 1"), std::string::npos) << failed;
  EXPECT_NE(failed.find("Invalid job id specified"), std::string::npos) << failed;
  EXPECT_NE(garbage.find("names no user"), std::string::npos) << garbage;
  EXPECT_TRUE(flight_job("90002").is_null());
  EXPECT_TRUE(flight_job("90003").is_null());
  EXPECT_EQ(slurm()["added"], 0);
  expect_nothing_left();
  TestRun st = service_status();
  ASSERT_EQ(st.status, 0) << st.err;
  EXPECT_NE(st.out.find("Slurm job 90002 not recorded: its user is not known"), std::string::npos)
      << st.out;
  EXPECT_NE(st.out.find("Slurm job 90003 not recorded: its user is not known"), std::string::npos)
      << st.out;
}

TEST_F(FlightSlurm, AJobGoneBeforeScontrolAnswersIsCancelledItsChildKilledAndReaped) {
  // A timeout far beyond the waits: only the cancellation can kill scontrol here.
  start("gone", {"--flight-slurm-timeout", "600"});
  job_comes("90004", users_->uid(kUserA));
  ASSERT_TRUE(wait_for([&] { return pending("90004"); })) << slurm().dump();
  std::vector<pid_t> kids = children_of(daemon_->pid());
  ASSERT_EQ(kids.size(), 1u) << "scontrol asked";
  job_goes("90004");
  ASSERT_TRUE(wait_for([&] { return slurm()["gone_pending"] == 1; })) << slurm().dump();
  EXPECT_TRUE(wait_for([&] { return children_of(daemon_->pid()).empty(); }))
      << "scontrol killed and reaped";
  EXPECT_FALSE(fs::exists(fmt::format("/proc/{}", kids[0]))) << "neither running nor a zombie";
  expect_nothing_left();
  // Its answer, had it come, finds nothing to do.
  answer("90004", std::to_string(users_->uid(kUserA)));
  json s = slurm();
  EXPECT_EQ(s["added"], 0) << s.dump();
  EXPECT_EQ(s["refused"], 0) << s.dump();
  EXPECT_TRUE(flight_job("90004").is_null());
}

TEST_F(FlightSlurm, AJobScontrolDoesNotAnswerForInTimeIsRefusedAndSaid) {
  start("timeout", {"--flight-slurm-timeout", "0.5"});
  job_comes("90005", users_->uid(kUserA));  // no answer file, ever
  ASSERT_TRUE(wait_for([&] { return slurm()["refused"] == 1; })) << slurm().dump();
  std::string why = slurm()["refused_why"].value("job_90005", "");
  EXPECT_NE(why.find("did not answer within 0.5 s: killed"), std::string::npos) << why;
  EXPECT_TRUE(wait_for([&] { return children_of(daemon_->pid()).empty(); }))
      << "scontrol killed and reaped";
  expect_nothing_left();
  EXPECT_TRUE(flight_job("90005").is_null());
  TestRun st = service_status();
  ASSERT_EQ(st.status, 0) << st.err;
  EXPECT_NE(st.out.find("Slurm job 90005 not recorded"), std::string::npos) << st.out;
  EXPECT_NE(st.out.find("did not answer within 0.5 s"), std::string::npos) << st.out;
}

}  // namespace
}  // namespace ezio::test
