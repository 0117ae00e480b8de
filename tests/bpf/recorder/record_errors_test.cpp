// SPDX-License-Identifier: GPL-2.0-only
// How `eziotrace record` fails and ends: bad commands, signals, crashes, privileges.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <thread>

#include "run.h"

namespace fs = std::filesystem;
using ezio::test::eziotrace;
using ezio::test::program;

TEST(RecordErrors, MissingCommandExits127WithoutArchive) {
  auto dir = ezio::test::scratch_dir("missing");
  auto r = eziotrace({"record", "-o", (dir / "t").string(), "--", "/no/such/program"});
  EXPECT_EQ(r.status, 127);
  EXPECT_NE(r.err.find("command not found"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "t"));
  EXPECT_FALSE(fs::exists(dir / "t.incomplete"));
}

TEST(RecordErrors, NonExecutableFileExits126) {
  auto dir = ezio::test::scratch_dir("noexec");
  std::ofstream(dir / "script") << "#!/bin/sh\necho hi\n";
  chmod((dir / "script").c_str(), 0644);
  auto r = eziotrace({"record", "-o", (dir / "t").string(), "--", (dir / "script").string()});
  EXPECT_EQ(r.status, 126);
  EXPECT_NE(r.err.find("Permission denied"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "t"));
}

TEST(RecordErrors, NoCommandIsAUsageError) {
  auto r = eziotrace({"record"});
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("no command"), std::string::npos) << r.err;
}

TEST(RecordErrors, ExistingOutputIsNotOverwrittenWithoutForce) {
  auto dir = ezio::test::scratch_dir("exists");
  auto out = (dir / "t").string();
  ASSERT_EQ(eziotrace({"record", "-o", out, "--", "true"}).status, 0);
  auto again = eziotrace({"record", "-o", out, "--", "true"});
  EXPECT_NE(again.status, 0);
  EXPECT_NE(again.err.find("already exists"), std::string::npos) << again.err;
  EXPECT_EQ(eziotrace({"record", "-f", "-o", out, "--", "true"}).status, 0);
}

TEST(RecordErrors, ApplicationExitStatusIsPassedOn) {
  auto dir = ezio::test::scratch_dir("status");
  auto r = eziotrace({"record", "-o", (dir / "t").string(), "--", "sh", "-c", "exit 42"});
  EXPECT_EQ(r.status, 42);
  auto j = ezio::test::dump_archive(dir / "t" / "eziotrace.otf2");
  EXPECT_EQ(j["properties"]["EZIOTRACE::APPLICATION_END"], "exit status 42");
}

TEST(RecordErrors, CrashingApplicationGivesAWholeArchiveThatSaysItCrashed) {
  auto dir = ezio::test::scratch_dir("crash");
  auto r = eziotrace({"record", "-o", (dir / "t").string(), "--", program("busy_io"),
                      (dir / "f").string(), "30", "crash"});
  EXPECT_EQ(r.status, 128 + SIGSEGV);
  auto j = ezio::test::dump_archive(dir / "t" / "eziotrace.otf2");
  ASSERT_FALSE(j.is_null());
  EXPECT_EQ(j["properties"]["EZIOTRACE::APPLICATION_END"], "killed by SIGSEGV");
  EXPECT_EQ(j["properties"]["EZIOTRACE::STATUS"], "application-crashed");
  EXPECT_NE(r.err.find("(the application crashed)"), std::string::npos) << r.err;
  int pwrites = 0;
  for (const auto& [id, loc] : j["locations"].items()) {
    for (const auto& c : loc["calls"]) pwrites += c["name"] == "pwrite64";
  }
  EXPECT_EQ(pwrites, 11);  // the crash comes right after the 11th write
}

// Every signal a fault of the program raises is a crash; a signal sent to it from outside is not.
TEST(RecordErrors, StatusTellsACrashFromAKill) {
  auto dir = ezio::test::scratch_dir("crash-kinds");
  for (const char* sig : {"SEGV", "ABRT", "BUS", "ILL", "FPE", "TERM", "KILL"}) {
    auto out = dir / sig;
    auto r = eziotrace({"record", "--layers", "syscall", "-o", out.string(), "--", "sh", "-c",
                        std::string("kill -") + sig + " $$"});
    EXPECT_GT(r.status, 128) << sig;
    auto j = ezio::test::dump_archive(out / "eziotrace.otf2");
    ASSERT_FALSE(j.is_null()) << sig;
    EXPECT_EQ(j["properties"]["EZIOTRACE::APPLICATION_END"], std::string("killed by SIG") + sig);
    bool crash = std::string_view(sig) != "TERM" && std::string_view(sig) != "KILL";
    EXPECT_EQ(j["properties"]["EZIOTRACE::STATUS"], crash ? "application-crashed" : "complete")
        << sig;
  }
}

// The archive is written while the application runs: a disk that fills up stops the recording,
// not the application, and leaves no archive that could pass for complete.
TEST(RecordErrors, FullDiskStopsTheRecordingNotTheApplication) {
  auto dir = ezio::test::scratch_dir("fulldisk");
  auto tiny = dir / "tiny";
  fs::create_directories(tiny);
  ASSERT_EQ(mount("tmpfs", tiny.c_str(), "tmpfs", 0, "size=1m"), 0) << strerror(errno);
  auto out = dir / "out";
  auto r = eziotrace({"record", "--layers", "syscall", "-o", (tiny / "t").string(), "--", "dd",
                      "if=/dev/zero", "of=" + out.string(), "bs=1", "count=200000", "status=none"});
  bool left_archive = fs::exists(tiny / "t") || fs::exists(tiny / "t.incomplete");
  umount(tiny.c_str());
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("No space left on device"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("no archive"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("the application ended: exit status 0"), std::string::npos) << r.err;
  EXPECT_EQ(fs::file_size(out), 200000u);  // dd ran to its end
  EXPECT_FALSE(left_archive);
}

TEST(RecordErrors, InterruptIsForwardedAndArchiveSaysSo) {
  auto dir = ezio::test::scratch_dir("interrupt");
  auto file = dir / "f";
  pid_t pid = fork();
  if (pid == 0) {
    int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(null, 2);
    execl(EZIO_BINARY, "eziotrace", "record", "-o", (dir / "t").c_str(), "--",
          program("busy_io").c_str(), file.c_str(), "60", (char*)nullptr);
    _exit(127);
  }
  // Interrupt once the application has started writing (not on a timer).
  for (int i = 0; i < 3000 && (!fs::exists(file) || fs::file_size(file) < 8192); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(fs::exists(file)) << "the application never started";
  kill(pid, SIGINT);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGINT);
  auto j = ezio::test::dump_archive(dir / "t" / "eziotrace.otf2");
  ASSERT_FALSE(j.is_null());
  EXPECT_EQ(j["properties"]["EZIOTRACE::STATUS"], "interrupted");
  EXPECT_EQ(j["properties"]["EZIOTRACE::STATUS_REASON"], "SIGINT received");
  EXPECT_EQ(j["properties"]["EZIOTRACE::APPLICATION_END"], "killed by SIGINT");
  EXPECT_FALSE(fs::exists(dir / "t.incomplete"));
}

TEST(RecordErrors, UnprivilegedUserGetsAClearMessage) {
  auto r = ezio::test::run({"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                            EZIO_BINARY, "record", "-o", "/tmp/never_written", "--", "true"});
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("CAP_BPF"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists("/tmp/never_written"));
}

// Root whose capabilities were taken away (a container, capsh, setpriv) is told which one is
// missing, before anything is loaded: the probe cache of this kernel stays as it was.
TEST(RecordErrors, RootWithoutTheBpfCapabilitiesIsToldWhichAndKeepsTheCache) {
  auto dir = ezio::test::scratch_dir("caps");
  auto cache = dir / "cache";
  fs::create_directories(cache);
  fs::permissions(cache, fs::perms::owner_all, fs::perm_options::replace);
  std::vector<std::string> env = {"EZIOTRACE_CACHE_DIR=" + cache.string()};
  auto first =
      ezio::test::run({EZIO_BINARY, "record", "-o", (dir / "t").string(), "--", "true"}, env);
  ASSERT_EQ(first.status, 0) << first.err;
  auto listing = [&] {
    std::vector<std::pair<std::string, uintmax_t>> files;
    for (const auto& e : fs::directory_iterator(cache)) {
      files.emplace_back(e.path().filename().string(), fs::file_size(e.path()));
    }
    std::sort(files.begin(), files.end());
    return files;
  };
  auto kept = listing();
  ASSERT_FALSE(kept.empty());
  struct Case {
    std::string drop, missing;
  };
  for (const Case& c : {Case{"-bpf,-perfmon,-sys_admin", "lacks CAP_BPF and CAP_PERFMON"},
                        Case{"-perfmon,-sys_admin", "lacks CAP_PERFMON"},
                        Case{"-bpf,-sys_admin", "lacks CAP_BPF"}}) {
    auto out = dir / "never";
    auto r = ezio::test::run({"setpriv", "--inh-caps=" + c.drop, "--bounding-set=" + c.drop,
                              EZIO_BINARY, "record", "-o", out.string(), "--", "true"},
                             env);
    EXPECT_EQ(r.status, 1) << c.drop;
    EXPECT_NE(r.err.find(c.missing), std::string::npos) << c.drop << ": " << r.err;
    EXPECT_NE(r.err.find("runs as root"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("cannot be attached"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(out));
    EXPECT_EQ(listing(), kept) << c.drop;
  }
  // CAP_SYS_ADMIN stands for both.
  auto admin =
      ezio::test::run({"setpriv", "--inh-caps=-bpf,-perfmon", "--bounding-set=-bpf,-perfmon",
                       EZIO_BINARY, "record", "-o", (dir / "admin").string(), "--", "true"},
                      env);
  EXPECT_EQ(admin.status, 0) << admin.err;
}

TEST(RecordErrors, UnderSudoTheApplicationRunsAsTheUserWhoOwnsTheOutput) {
  auto dir = ezio::test::scratch_dir("sudo");
  chmod(dir.c_str(), 0777);  // the application (as nobody) writes its file here
  auto out = dir / "t";
  auto r = ezio::test::run({EZIO_BINARY, "record", "-o", out.string(), "--", "sh", "-c",
                            "id -u; id -g; echo x > " + (dir / "f").string()},
                           {"SUDO_UID=65534", "SUDO_GID=65534"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "65534\n65534\n");
  struct stat st {};
  ASSERT_EQ(stat((dir / "f").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 65534u);
  for (const auto& e : fs::recursive_directory_iterator(out)) {
    ASSERT_EQ(stat(e.path().c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, 65534u) << e.path();
  }
  ASSERT_EQ(stat(out.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 65534u);
}
