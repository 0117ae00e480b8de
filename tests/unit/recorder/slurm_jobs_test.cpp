// SPDX-License-Identifier: GPL-2.0-only
// eziotraced --flight-slurm without Slurm or the kernel: which directories are jobs, the user in
// scontrol's line, the bookkeeping of jobs begun, added, refused, cancelled and removed; and the
// watcher on a real directory with real inotify (mkdir and rmdir of job_<id> as Slurm's step daemon
// does).
#include "recorder/service/slurm_jobs.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "recorder/service/slurm_watch.h"

namespace ezio::recorder::service {
namespace {

namespace fs = std::filesystem;

TEST(SlurmJobs, JobDirectoriesAreJobUnderscoreDigits) {
  EXPECT_EQ(slurm_job_of_dir("job_42"), "42");
  EXPECT_EQ(slurm_job_of_dir("job_1234567"), "1234567");
  for (const char* other : {"job_", "job_4x", "step_0", "system", "job_42.tmp", "xjob_42", ""}) {
    EXPECT_FALSE(slurm_job_of_dir(other)) << other;
  }
}

TEST(SlurmJobs, TheUserIdComesFromScontrolsUserIdField) {
  // As Slurm 22.05's `scontrol show job -o 7` prints it (abridged).
  std::string line =
      "JobId=7 JobName=wrap UserId=ezio_a(1001) GroupId=ezio_a(1001) MCS_label=N/A Priority=1 "
      "Nice=0 Account=(null) QOS=(null) JobState=RUNNING Reason=None\n";
  EXPECT_EQ(scontrol_user_id(line), uid_t(1001));
  EXPECT_EQ(scontrol_user_id("JobId=8 UserId=(1002) GroupId=(1002)"), uid_t(1002));
  EXPECT_EQ(scontrol_user_id("JobId=9 UserId=root(0) GroupId=root(0)"), uid_t(0));
  // Not to be taken for the user: another field ending in UserId, a missing uid, an error.
  EXPECT_FALSE(scontrol_user_id("JobId=9 OrigUserId=x(5)"));
  EXPECT_FALSE(scontrol_user_id("JobId=9 UserId=alice GroupId=alice(5)"));
  EXPECT_FALSE(scontrol_user_id("slurm_load_jobs error: Invalid job id specified"));
}

// What add(), remove() and cancel() were called with (the name's last component: the watcher
// gives paths).
struct Recorder {
  std::vector<std::string> added, removed, cancelled, paths;
  std::set<std::string> full;  // add() refuses these
  SlurmJobSet::Actions actions() {
    return {[this](const std::string& n) -> std::string {
              std::string name = fs::path(n).filename();
              if (full.count(name)) return "no session slot";
              added.push_back(name);
              paths.push_back(n);
              return "";
            },
            [this](const std::string& n) { removed.push_back(fs::path(n).filename()); },
            [this](const std::string& n) { cancelled.push_back(fs::path(n).filename()); }};
  }
};

TEST(SlurmJobs, NewJobsAreBegunOnceRecordedWhenSettledAndGoneOnesRemoved) {
  Recorder r;
  SlurmJobSet set;
  set.reconcile({"job_1", "job_2"}, r.actions());
  set.reconcile({"job_1", "job_2"}, r.actions());
  EXPECT_EQ(r.added, (std::vector<std::string>{"job_1", "job_2"}));
  EXPECT_EQ(set.pending(), (std::set<std::string>{"job_1", "job_2"}));
  EXPECT_TRUE(set.recorded().empty()) << "recorded once their start is over, not before";
  EXPECT_EQ(set.status()["pending_now"], nlohmann::json::array({"job_1", "job_2"}));
  set.settle("job_1", "");
  set.settle("job_2", "");
  EXPECT_TRUE(set.pending().empty());
  set.reconcile({"job_2", "job_3"}, r.actions());
  set.settle("job_3", "");
  EXPECT_EQ(r.removed, std::vector<std::string>{"job_1"});
  EXPECT_TRUE(r.cancelled.empty());
  EXPECT_EQ(r.added.back(), "job_3");
  EXPECT_EQ(set.recorded(), (std::set<std::string>{"job_2", "job_3"}));
  EXPECT_EQ(set.status()["added"], 3);
  EXPECT_EQ(set.status()["removed"], 1);
  EXPECT_EQ(set.status()["refused"], 0);
  EXPECT_EQ(set.status()["pending"], 0);
}

TEST(SlurmJobs, AJobThatDoesNotFitIsCountedAndNotRetriedWhileItRuns) {
  Recorder r;
  r.full = {"job_5"};
  SlurmJobSet set;
  set.reconcile({"job_4", "job_5"}, r.actions());
  set.settle("job_4", "");
  r.full.clear();  // a slot frees: job_5, half run, stays out; it is refused, not half recorded
  set.reconcile({"job_4", "job_5", "job_6"}, r.actions());
  set.settle("job_6", "");
  EXPECT_EQ(r.added, (std::vector<std::string>{"job_4", "job_6"}));
  EXPECT_EQ(set.status()["refused"], 1);
  EXPECT_EQ(set.status()["refused_now"], nlohmann::json::array({"job_5"}));
  EXPECT_EQ(set.status()["refused_why"], (nlohmann::json{{"job_5", "no session slot"}}));
  // Gone, it is forgotten (never removed: it was not added); its id coming again is a new job.
  set.reconcile({"job_4", "job_6"}, r.actions());
  EXPECT_TRUE(r.removed.empty());
  EXPECT_EQ(set.status()["refused_now"], nlohmann::json::array());
  EXPECT_EQ(set.status()["refused_why"], nlohmann::json::object());
  set.reconcile({"job_4", "job_5", "job_6"}, r.actions());
  EXPECT_EQ(r.added.back(), "job_5");
}

// A start that fails (scontrol's answer, the ring) refuses its job with the reason; a job gone
// before its start is over is cancelled, and its late outcome changes nothing.
TEST(SlurmJobs, AStartRefusedIsListedWithWhyAndOneGoneIsCancelled) {
  Recorder r;
  SlurmJobSet set;
  set.reconcile({"job_7", "job_8"}, r.actions());
  set.settle("job_7", "its user is not known: exit status 1");
  EXPECT_EQ(set.status()["refused_why"],
            (nlohmann::json{{"job_7", "its user is not known: exit status 1"}}));
  EXPECT_EQ(set.status()["refused"], 1);
  set.reconcile({"job_7"}, r.actions());
  EXPECT_EQ(r.cancelled, std::vector<std::string>{"job_8"});
  EXPECT_EQ(set.status()["gone_pending"], 1);
  set.settle("job_8", "");  // its ring came after it went: not recorded
  EXPECT_TRUE(set.recorded().empty());
  EXPECT_EQ(set.status()["added"], 0);
  EXPECT_EQ(r.added, (std::vector<std::string>{"job_7", "job_8"}));  // neither begun again
  set.reconcile({"job_7"}, r.actions());
  EXPECT_EQ(r.added.size(), 2u);
}

// Waits (no time asserted) for the watcher's descriptor and lets it read the directory.
void settle(SlurmWatch& w) {
  pollfd p{w.fd(), POLLIN, 0};
  ASSERT_EQ(poll(&p, 1, 10000), 1) << "no inotify event within 10 s";
  w.on_event();
}

TEST(SlurmWatch, FollowsJobDirectoriesAsTheyComeAndGoAndWaitsForTheRoot) {
  fs::path base = fs::temp_directory_path() / ("ezio-slurm-watch-" + std::to_string(getpid()));
  fs::remove_all(base);
  fs::create_directories(base);
  // Debian's Slurm names it after the node: the second place is the one that comes.
  fs::path root = base / "node1_slurmstepd.scope";
  Recorder r;
  SlurmWatch w({base / "slurmstepd.scope", root}, r.actions());
  EXPECT_EQ(w.status()["watching"], false);  // not there yet: looked for by poll()
  fs::create_directories(root / "job_11" / "step_0");
  fs::create_directories(root / "system");
  w.poll();
  EXPECT_EQ(w.status()["watching"], true);
  EXPECT_EQ(r.added, std::vector<std::string>{"job_11"});
  EXPECT_EQ(r.paths, std::vector<std::string>{(root / "job_11").string()});
  EXPECT_EQ(w.status()["dir"], root.string());
  w.settle(root / "job_11", "");
  fs::create_directory(root / "job_12");
  settle(w);
  EXPECT_EQ(r.added, (std::vector<std::string>{"job_11", "job_12"}));
  w.settle(root / "job_12", "");
  fs::remove_all(root / "job_11");
  settle(w);
  EXPECT_EQ(r.removed, std::vector<std::string>{"job_11"});
  fs::remove_all(root);  // slurmd gone with its directory: its jobs with it
  settle(w);
  EXPECT_EQ(r.removed, (std::vector<std::string>{"job_11", "job_12"}));
  EXPECT_EQ(w.status()["watching"], false);
  fs::remove_all(base);
}

}  // namespace
}  // namespace ezio::recorder::service
