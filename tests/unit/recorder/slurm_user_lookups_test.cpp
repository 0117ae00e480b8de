// SPDX-License-Identifier: GPL-2.0-only
// The users of new Slurm jobs asked from scontrol without waiting for it (slurm_user_lookups.h),
// with tests/support/fake_scontrol.sh: it answers once the test writes the job's answer file, so
// that no time is guessed. Each child is reaped: none is left running or a zombie.
#include "recorder/service/slurm_user_lookups.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/error.h"
#include "run.h"

namespace ezio::recorder::service {
namespace {

namespace fs = std::filesystem;

constexpr char kFake[] = EZIO_TEST_SUPPORT_DIR "/fake_scontrol.sh";
constexpr uint64_t kMinute = 60'000'000'000ull;

// The fake scontrol's answer directory (FAKE_SCONTROL_DIR, which the children inherit).
class SlurmUserLookupsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ezio::test::scratch_dir("fake-scontrol");
    setenv("FAKE_SCONTROL_DIR", dir_.c_str(), 1);
  }
  void TearDown() override { unsetenv("FAKE_SCONTROL_DIR"); }
  void answer(const std::string& id, const std::string& text) {
    std::ofstream(dir_ / (id + ".tmp")) << text << "\n";
    fs::rename(dir_ / (id + ".tmp"), dir_ / id);  // whole, never half written
  }
  // Waits for the lookups' fd (a safety net of 20 s, no time asserted) until answers come or
  // every child is reaped.
  static std::vector<SlurmUserLookups::Answer> wait(SlurmUserLookups& l) {
    for (;;) {
      pollfd p{l.fd(), POLLIN, 0};
      if (poll(&p, 1, 20000) != 1) {
        ADD_FAILURE() << "scontrol's children never said anything within 20 s";
        return {};
      }
      std::vector<SlurmUserLookups::Answer> a = l.on_ready();
      if (!a.empty() || l.children() == 0) return a;
    }
  }
  fs::path dir_;
};

TEST_F(SlurmUserLookupsTest, TheUserComesWhenScontrolAnswersNotBefore) {
  SlurmUserLookups l(kFake, kMinute);
  l.start("41", 0);
  EXPECT_EQ(l.children(), 1u);
  EXPECT_TRUE(l.on_ready().empty()) << "no answer before scontrol's";
  answer("41", "1234");
  std::vector<SlurmUserLookups::Answer> a = wait(l);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].id, "41");
  EXPECT_EQ(a[0].uid, uid_t(1234));
  EXPECT_EQ(a[0].why, "");
  EXPECT_EQ(l.children(), 0u);
}

TEST_F(SlurmUserLookupsTest, AFailureOrAnAnswerWithoutAUserIsSaid) {
  SlurmUserLookups l(kFake, kMinute);
  answer("42", "fail");
  answer("43", "garbage");
  l.start("42", 0);
  l.start("43", 0);
  std::vector<SlurmUserLookups::Answer> all;
  while (all.size() < 2 && !HasFailure()) {
    for (auto& a : wait(l)) all.push_back(a);
  }
  ASSERT_EQ(all.size(), 2u);
  for (const auto& a : all) {
    EXPECT_FALSE(a.uid) << a.id;
    if (a.id == "42") {
      EXPECT_NE(a.why.find("failed, exit status 1"), std::string::npos) << a.why;
      EXPECT_NE(a.why.find("Invalid job id specified"), std::string::npos) << a.why;
    } else {
      EXPECT_NE(a.why.find("names no user"), std::string::npos) << a.why;
    }
  }
  EXPECT_EQ(l.children(), 0u);
}

TEST_F(SlurmUserLookupsTest, ALookupPastItsTimeoutIsKilledAndReaped) {
  SlurmUserLookups l(kFake, 500'000'000);
  l.start("44", 1'000'000'000);
  EXPECT_TRUE(l.expire(1'400'000'000).empty()) << "before its deadline";
  std::vector<SlurmUserLookups::Answer> a = l.expire(1'500'000'000);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_FALSE(a[0].uid);
  EXPECT_NE(a[0].why.find("did not answer within 0.5 s: killed"), std::string::npos) << a[0].why;
  EXPECT_TRUE(wait(l).empty()) << "a killed child gives no answer";
  EXPECT_EQ(l.children(), 0u);
  EXPECT_TRUE(l.expire(9'000'000'000).empty()) << "said once";
}

TEST_F(SlurmUserLookupsTest, ACancelledLookupIsKilledReapedAndNeverAnswers) {
  SlurmUserLookups l(kFake, kMinute);
  l.start("45", 0);
  l.cancel("45");
  EXPECT_TRUE(wait(l).empty());
  EXPECT_EQ(l.children(), 0u);
  EXPECT_TRUE(l.expire(2 * kMinute).empty());
}

TEST_F(SlurmUserLookupsTest, ChildrenStillRunningAtTheEndAreKilledAndReaped) {
  pid_t child = -1;
  {
    SlurmUserLookups l(kFake, kMinute);
    l.start("46", 0);
    // The only child of this process (the test runs nothing else meanwhile).
    std::ifstream kids(fmt::format("/proc/{}/task/{}/children", getpid(), getpid()));
    kids >> child;
    ASSERT_GT(child, 0);
  }
  EXPECT_FALSE(fs::exists(fmt::format("/proc/{}", child))) << "neither running nor a zombie";
}

// scontrol gets stdin, stdout and stderr, nothing else of the service's (systemd's socket is not
// close-on-exec): the fake's shell may open its script, never one of this process's fds.
TEST_F(SlurmUserLookupsTest, AChildHoldsNoneOfTheServicesFds) {
  int p[2];
  ASSERT_EQ(pipe(p), 0);  // without O_CLOEXEC, as an inherited fd is
  std::string ours = fs::read_symlink(fmt::format("/proc/self/fd/{}", p[0])).string();
  SlurmUserLookups l(kFake, kMinute);
  l.start("48", 0);
  pid_t child = -1;
  std::ifstream(fmt::format("/proc/{}/task/{}/children", getpid(), getpid())) >> child;
  ASSERT_GT(child, 0);
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(fmt::format("/proc/{}/fd", child), ec)) {
    EXPECT_NE(fs::read_symlink(e.path(), ec).string(), ours) << e.path();
  }
  EXPECT_FALSE(ec) << ec.message();
  close(p[0]);
  close(p[1]);
}

// A burst of jobs (slurmd restarted on a full node) runs kMaxChildren scontrols, the others in
// order as those end.
TEST_F(SlurmUserLookupsTest, NoMoreThanMaxChildrenRunTheOthersWaitTheirTurn) {
  constexpr size_t n = SlurmUserLookups::kMaxChildren;
  SlurmUserLookups l(kFake, kMinute);
  for (size_t i = 0; i < n + 3; ++i) l.start(fmt::format("{}", 100 + i), 0);
  EXPECT_EQ(l.children(), n);
  EXPECT_EQ(l.waiting(), 3u);
  answer(fmt::format("{}", 100 + n), "7");  // a waiting one's answer: it has not asked yet
  answer("100", "1000");
  std::vector<SlurmUserLookups::Answer> a = wait(l);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].id, "100");
  EXPECT_EQ(l.children(), n) << "the first waiting took the room";
  EXPECT_EQ(l.waiting(), 2u);
  a = wait(l);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].id, fmt::format("{}", 100 + n));
  EXPECT_EQ(a[0].uid, uid_t(7));
  EXPECT_EQ(l.children(), n) << "its room taken by the next waiting one";
  EXPECT_EQ(l.waiting(), 1u);
}

// Waiting ones cancelled or past their time never run; their time counts from start().
TEST_F(SlurmUserLookupsTest, AWaitingLookupCancelledOrTimedOutNeverRuns) {
  constexpr size_t n = SlurmUserLookups::kMaxChildren;
  SlurmUserLookups l(kFake, 500'000'000);
  for (size_t i = 0; i < n; ++i) l.start(fmt::format("{}", 200 + i), 0);
  l.start("300", 100'000'000);
  l.start("301", 100'000'000);
  EXPECT_EQ(l.waiting(), 2u);
  l.cancel("301");
  EXPECT_EQ(l.waiting(), 1u);
  std::vector<SlurmUserLookups::Answer> a = l.expire(550'000'000);
  EXPECT_EQ(a.size(), n) << "the running ones' time is up";
  EXPECT_EQ(l.waiting(), 1u) << "300's is not";
  a = l.expire(600'000'000);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].id, "300");
  EXPECT_FALSE(a[0].uid);
  EXPECT_NE(a[0].why.find("did not get its turn within 0.5 s"), std::string::npos) << a[0].why;
  EXPECT_EQ(l.waiting(), 0u);
  while (l.children() > 0 && !HasFailure()) EXPECT_TRUE(wait(l).empty());
  EXPECT_TRUE(l.expire(9'000'000'000).empty()) << "said once";
}

// Its turn come, a lookup whose scontrol cannot run any more is answered with why. scontrol is a
// name looked for in PATH, which then loses it (the running ones' shells hold their script).
TEST_F(SlurmUserLookupsTest, AWaitingLookupThatCannotRunIsAnsweredWithWhy) {
  constexpr size_t n = SlurmUserLookups::kMaxChildren;
  fs::path bin = dir_ / "bin";
  fs::create_directory(bin);
  fs::create_symlink(kFake, bin / "ezio-fake-scontrol");
  struct PathKept {  // PATH as it was at the end, whatever fails
    std::string path = getenv("PATH");
    ~PathKept() { setenv("PATH", path.c_str(), 1); }
  } kept;
  // The fake's own commands (sleep, cat) are found in the rest, which the children inherit.
  setenv("PATH", (bin.string() + ":" + kept.path).c_str(), 1);
  SlurmUserLookups l("ezio-fake-scontrol", kMinute);
  for (size_t i = 0; i < n; ++i) l.start(fmt::format("{}", 400 + i), 0);
  l.start("500", 0);
  setenv("PATH", (dir_ / "empty").c_str(), 1);
  answer("400", "1");
  std::vector<SlurmUserLookups::Answer> all;
  while (all.size() < 2 && !HasFailure()) {
    for (auto& x : wait(l)) all.push_back(x);
  }
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].id, "400");
  EXPECT_EQ(all[1].id, "500");
  EXPECT_FALSE(all[1].uid);
  EXPECT_NE(all[1].why.find("cannot run"), std::string::npos) << all[1].why;
  EXPECT_EQ(l.waiting(), 0u);
}

TEST_F(SlurmUserLookupsTest, AnScontrolThatCannotRunIsAnError) {
  SlurmUserLookups l("/nonexistent/scontrol", kMinute);
  EXPECT_THROW(l.start("47", 0), ezio::Error);
  EXPECT_EQ(l.children(), 0u);
}

}  // namespace
}  // namespace ezio::recorder::service
