// SPDX-License-Identifier: GPL-2.0-only
// eziotraced's flight recorder end to end (docs/flight-recorder.md): a cgroup v2 of the test's own,
// owned by ezio_a, flight-recorded; known writes of ezio_a inside it, of root inside it and of
// ezio_a outside it; eziotrace snapshot by the owner holds the window asked and only the owner's
// processes of the cgroup, opens in the analyzers; the owner's processes in cgroups below the job
// join it; another user is refused.
#include <fmt/format.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "job_cgroup.h"
#include "service_env.h"

namespace fs = std::filesystem;
using ezio::test::as_user;
using ezio::test::JobCgroup;
using ezio::test::kUserA;
using ezio::test::kUserB;
using TestRun = ezio::test::Run;
using nlohmann::json;

namespace {

std::vector<std::string> dd(const fs::path& file) {
  return {"/bin/dd", "if=/dev/zero", "of=" + file.string(), "bs=4096",
          "count=8", "conv=fsync",   "status=none"};
}

std::vector<std::string> snapshot_argv(const std::string& socket, const std::string& job,
                                       const fs::path& out, const std::string& seconds = "") {
  std::vector<std::string> argv{EZIO_BINARY, "snapshot", "--socket", socket,
                                "--job",     job,        "-o",       out.string()};
  if (!seconds.empty()) argv.insert(argv.end(), {"--seconds", seconds});
  return argv;
}

struct Archive {
  json props;
  std::set<std::string> files;
  std::set<long> pids;
  std::set<std::string> names;  // the processes' (location groups': "comm [pid]")
  uint64_t events = 0, outside_window = 0;
};

// What the archive holds, read with python3-otf2 (tests/support/otf2_dump.py).
Archive read_archive(const fs::path& dir) {
  Archive a;
  json d = ezio::test::dump_archive(dir / "eziotrace.otf2");
  a.props = d["properties"];
  for (auto& [ref, loc] : d["locations"].items()) {
    if (loc["props"].contains("EZIOTRACE::PID")) {
      a.pids.insert(loc["props"]["EZIOTRACE::PID"].get<long>());
    }
    std::string group = loc.value("group", "");
    a.names.insert(group.substr(0, group.rfind(" [")));
    for (const auto& c : loc["calls"]) {
      for (const auto& io : c["io"]) {
        if (io.contains("file")) a.files.insert(fs::path(io["file"].get<std::string>()).filename());
      }
    }
  }
  TestRun ev = ezio::test::run({"/usr/bin/python3", EZIO_TEST_SUPPORT_DIR "/otf2_dump.py",
                                "--events", (dir / "eziotrace.otf2").string()});
  EXPECT_EQ(ev.status, 0) << ev.err;
  json e = json::parse(ev.out, nullptr, false);
  uint64_t start = a.props.value("EZIOTRACE::SNAPSHOT_START_NS", uint64_t{0});
  uint64_t end = a.props.value("EZIOTRACE::SNAPSHOT_END_NS", uint64_t{0});
  if (e.is_discarded()) return a;
  for (auto& [ref, loc] : e["locations"].items()) {
    for (const auto& event : loc["events"]) {
      uint64_t t = event["t"].get<uint64_t>();
      ++a.events;
      a.outside_window += t < start || t > end;
    }
  }
  return a;
}

class Flight : public ezio::test::WithTestUsers {};

TEST_F(Flight, SnapshotHoldsTheWindowAskedAndOnlyTheOwnersProcessesOfTheJob) {
  JobCgroup job("ezio-flight-test", users_->uid(kUserA));
  ezio::test::ServiceDaemon daemon("flight", {"--flight", job.path(), "--flight-seconds", "60"});
  fs::path dir = ezio::test::user_dir(kUserA, "flight");
  fs::path root_dir = ezio::test::scratch_dir("flight-root");
  job.run_as(kUserA, dd(dir / "early.bin"));
  job.run_as("root", dd(root_dir / "root.bin"));                    // in the job, not its owner's
  TestRun outside = as_user(kUserA, dd(dir / "outside.bin"), dir);  // the owner's, not in the job
  ASSERT_EQ(outside.status, 0) << outside.err;
  // The window asked (the last 1.5 s) ends at the snapshot, begins well after early.bin's writes.
  std::this_thread::sleep_for(std::chrono::seconds(3));
  job.run_as(kUserA, dd(dir / "late.bin"));
  TestRun late =
      as_user(kUserA, snapshot_argv(daemon.socket(), job.path(), dir / "late", "1.5"), dir);
  ASSERT_EQ(late.status, 0) << late.err;
  TestRun all = as_user(kUserA, snapshot_argv(daemon.socket(), job.path(), dir / "all"), dir);
  ASSERT_EQ(all.status, 0) << all.err;

  Archive w = read_archive(dir / "late");
  EXPECT_EQ(w.props["EZIOTRACE::STATUS"], "snapshot");
  EXPECT_EQ(w.props["EZIOTRACE::SNAPSHOT_JOB"], job.path());
  EXPECT_EQ(w.props["EZIOTRACE::RECORDING_PATH"], "eziotraced");
  uint64_t start = w.props.value("EZIOTRACE::SNAPSHOT_START_NS", uint64_t{0});
  uint64_t end = w.props.value("EZIOTRACE::SNAPSHOT_END_NS", uint64_t{0});
  EXPECT_NEAR(double(end - start), 1.5e9, 1e6);  // nothing dropped: the window asked
  EXPECT_EQ(w.props["EZIOTRACE::SNAPSHOT_DROPPED"], 0);
  EXPECT_TRUE(w.files.count("late.bin")) << w.props.dump();
  EXPECT_FALSE(w.files.count("early.bin"));
  EXPECT_GT(w.events, 0u);
  EXPECT_EQ(w.outside_window, 0u);

  Archive a = read_archive(dir / "all");
  EXPECT_TRUE(a.files.count("early.bin"));
  EXPECT_TRUE(a.files.count("late.bin"));
  EXPECT_EQ(a.outside_window, 0u);
  for (const Archive* s : {&w, &a}) {
    EXPECT_FALSE(s->files.count("root.bin")) << "root's process in the job is not the owner's";
    EXPECT_FALSE(s->files.count("outside.bin")) << "the owner's process outside the job";
  }
  EXPECT_EQ(a.pids.size(), 2u);  // the two dd of ezio_a in the job
  EXPECT_EQ(ezio::test::owner_of(dir / "all" / "eziotrace.otf2"), users_->uid(kUserA));

  // Every analyzer reads it.
  for (const char* cmd : {"layers", "files", "profile", "latency", "advise"}) {
    TestRun r = ezio::test::run({EZIO_BINARY, cmd, (dir / "all").string()});
    EXPECT_EQ(r.status, 0) << cmd << ": " << r.err;
    if (std::string(cmd) == "files") {
      EXPECT_NE(r.out.find("late.bin"), std::string::npos) << r.out;
    }
  }
  TestRun report = ezio::test::run(
      {EZIO_BINARY, "report", (dir / "all").string(), "-o", (root_dir / "report.html").string()});
  EXPECT_EQ(report.status, 0) << report.err;
  EXPECT_TRUE(fs::exists(root_dir / "report.html"));
}

// Slurm's tasks run three levels below the job's cgroup (job_<id>/step_<n>/user/task_<k>): a job
// named by its own cgroup takes its owner's processes of the cgroups below it, not root's there.
TEST_F(Flight, TheOwnersProcessesInCgroupsBelowTheJobJoinIt) {
  JobCgroup job("ezio-flight-nested", users_->uid(kUserA), "step_0/user/task_0");
  ezio::test::ServiceDaemon daemon("flight-nested", {"--flight", job.path()});
  fs::path dir = ezio::test::user_dir(kUserA, "flight-nested");
  fs::path root_dir = ezio::test::scratch_dir("flight-nested-root");
  job.run_as(kUserA, dd(dir / "deep.bin"));
  job.run_as("root", dd(root_dir / "deep_root.bin"));
  TestRun r = as_user(kUserA, snapshot_argv(daemon.socket(), job.path(), dir / "s"), dir);
  ASSERT_EQ(r.status, 0) << r.err;
  Archive a = read_archive(dir / "s");
  EXPECT_TRUE(a.files.count("deep.bin")) << a.props.dump();
  EXPECT_FALSE(a.files.count("deep_root.bin")) << "root's process below the job";
  EXPECT_EQ(a.pids.size(), 1u);  // the dd of ezio_a
}

// A process of the owner already in the job when its recording begins (a batch script's shell)
// joins it, and its snapshot names it from /proc, as its fork and exec records would have.
TEST_F(Flight, AProcessThereBeforeTheRecordingIsNamed) {
  JobCgroup job("ezio-flight-before", users_->uid(kUserA));
  fs::path dir = ezio::test::user_dir(kUserA, "flight-before");
  fs::path go = dir / "go";
  std::vector<std::string> shell{"/bin/sh", "-c",
                                 fmt::format("while [ ! -e {} ]; do sleep 0.05; done; echo x > {}",
                                             go.string(), (dir / "before.txt").string())};
  pid_t sh = job.start_as(kUserA, shell);
  ASSERT_GT(sh, 0);
  {
    ezio::test::ServiceDaemon daemon("flight-before", {"--flight", job.path()});
    std::ofstream(go.string()) << "go\n";
    JobCgroup::finish(sh, shell);
    TestRun r = as_user(kUserA, snapshot_argv(daemon.socket(), job.path(), dir / "s"), dir);
    ASSERT_EQ(r.status, 0) << r.err;
  }
  Archive a = read_archive(dir / "s");
  EXPECT_TRUE(a.files.count("before.txt")) << "the shell's own write, after it joined";
  EXPECT_TRUE(a.pids.count(sh)) << a.props.dump();
  EXPECT_EQ(a.names.count("?"), 0u) << "every process named";
  EXPECT_TRUE(a.names.count("sh")) << "the shell named from /proc";
}

TEST_F(Flight, AnotherUsersSnapshotIsRefusedClearly) {
  JobCgroup job("ezio-flight-refused", users_->uid(kUserA));
  ezio::test::ServiceDaemon daemon("flight-refused", {"--flight", job.path()});
  fs::path dir = ezio::test::user_dir(kUserB, "flight");
  TestRun r = as_user(kUserB, snapshot_argv(daemon.socket(), job.path(), dir / "s"), dir);
  EXPECT_NE(r.status, 0);
  EXPECT_LT(r.status, 128);
  EXPECT_NE(r.err.find("is ezio_a's: only its owner and root may take its snapshot"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir / "s"));
  TestRun unknown = as_user(kUserB, snapshot_argv(daemon.socket(), "/no-such-job", dir / "s"), dir);
  EXPECT_NE(unknown.status, 0);
  EXPECT_NE(unknown.err.find("flight-records no job /no-such-job"), std::string::npos)
      << unknown.err;
  // Root may take any job's.
  TestRun root = ezio::test::run(snapshot_argv(daemon.socket(), job.path(), dir / "root"));
  EXPECT_EQ(root.status, 0) << root.err;
}

}  // namespace
