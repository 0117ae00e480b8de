// SPDX-License-Identifier: GPL-2.0-only
// eziotraced with real users and real BPF (root): a user records through the service and gets
// what the in-process path records; sessions of two users stay apart; what a user may not have
// traced is refused; a client or a service that dies leaves nothing behind.
#include <grp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <set>
#include <thread>

#include "loop_fs.h"
#include "recorder/service/client.h"
#include "service_env.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace ezio::test {
namespace {

SuiteServices suite;

class Service : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { suite.start("main"); }
  static void TearDownTestSuite() { suite.stop(); }
};

std::vector<std::string> record_argv(const std::string& socket, const fs::path& out,
                                     const std::vector<std::string>& command) {
  std::vector<std::string> argv{EZIO_BINARY, "record", "--service=" + socket, "-o", out.string()};
  argv.push_back("--");
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

// The first child of pid (from /proc), 0 when it has none.
pid_t child_of(pid_t pid) {
  std::string children =
      read_text("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children");
  return children.empty() ? 0 : pid_t(std::stol(children));
}

// Ends a process the test started (directly or through runuser) by its pid.
void end_process(pid_t pid) {
  if (pid > 0) kill(pid, SIGKILL);
}

long value_of(const std::string& out, const std::string& key) {
  auto at = out.find(key + "=");
  if (at == std::string::npos) throw std::runtime_error("no " + key + " in: " + out);
  return std::stol(out.substr(at + key.size() + 1));
}

// Counts and bytes per layer (not times), from `eziotrace layers --json`.
std::map<std::string, json> layer_counts(const fs::path& archive) {
  json j = json::parse(
      must_run({EZIO_BINARY, "layers", "--json", (archive / "eziotrace.otf2").string()}));
  std::map<std::string, json> out;
  for (const auto& row : j["layers"]) {
    json counts;
    for (const char* k : {"reads", "writes", "other", "read_bytes", "write_bytes"}) {
      counts[k] = row.value(k, json());
    }
    out[row["layer"].get<std::string>()] = counts;
  }
  return out;
}

// Block requests on `device` in the archive, and every pid and file path it names.
struct Seen {
  long requests_on_device = 0;
  std::set<long> pids;
  std::set<std::string> files;
  json props;
};

Seen seen_in(const fs::path& archive, const std::string& device) {
  json d = dump_archive(archive / "eziotrace.otf2");
  Seen s;
  s.props = d["properties"];
  for (auto& [ref, loc] : d["locations"].items()) {
    if (loc["props"].contains("EZIOTRACE::PID"))
      s.pids.insert(loc["props"]["EZIOTRACE::PID"].get<long>());
    std::string name = loc["name"];
    for (const auto& io : loc.value("loose_io", json::array())) {
      if (name == "block " + device && io["kind"] == "IoOperationBegin") ++s.requests_on_device;
    }
    for (const auto& c : loc["calls"]) {
      for (const auto& io : c["io"]) {
        if (io.contains("file")) s.files.insert(io["file"].get<std::string>());
      }
    }
  }
  return s;
}

TEST_F(Service, UserRecordingMatchesInProcessAndDiskStats) {
  LoopFs fs("ext4");
  must_run({"chown", std::string(kUserA) + ":", fs.mount_point().string()});
  auto file = (fs / "f").string();
  must_run({"dd", "if=/dev/zero", "of=" + file, "bs=64k", "count=16"});
  must_run({"chown", std::string(kUserA) + ":", file});
  must_run({"sync"});
  fs::path dir = user_dir(kUserA, "match");
  std::vector<std::string> work{EZIO_WORKLOAD, "odirect", file, "16", fs.device()};
  ezio::test::Run viaservice =
      as_user(kUserA, record_argv(suite.daemon->socket(), dir / "service", work), dir);
  ASSERT_EQ(viaservice.status, 0) << viaservice.err;
  EXPECT_EQ(owner_of(dir / "service" / "eziotrace.otf2"), suite.users->uid(kUserA));
  Seen s = seen_in(dir / "service", fs.device());
  EXPECT_EQ(s.requests_on_device, value_of(viaservice.out, "stat_ios"));
  EXPECT_EQ(s.props["EZIOTRACE::RECORDING_PATH"], "eziotraced");

  ezio::test::Run inproc =
      run({EZIO_BINARY, "record", "--no-service", "-o", (dir / "inprocess").string(), "--",
           EZIO_WORKLOAD, "odirect", file, "16", fs.device()});
  ASSERT_EQ(inproc.status, 0) << inproc.err;
  Seen i = seen_in(dir / "inprocess", fs.device());
  EXPECT_EQ(i.requests_on_device, value_of(inproc.out, "stat_ios"));
  EXPECT_EQ(i.props["EZIOTRACE::RECORDING_PATH"], "in-process");
  auto ls = layer_counts(dir / "service"), li = layer_counts(dir / "inprocess");
  // The block layer on the loop device; elsewhere it depends on what the page cache held.
  EXPECT_EQ(s.requests_on_device, i.requests_on_device);
  for (const char* layer : {"Syscall", "VFS", "FS"}) {
    EXPECT_EQ(ls[layer], li[layer]) << layer;
  }
}

// `record` of busy_io writing dir/file, through the service, into dir/trace.
std::vector<std::string> busy_io_argv(const fs::path& socket, const fs::path& dir,
                                      const std::string& file) {
  return record_argv(socket, dir / "trace", {program("busy_io"), (dir / file).string(), "3"});
}

// A's and B's commands run at the same time, each in its own directory.
std::pair<ezio::test::Run, ezio::test::Run> both_at_once(const std::vector<std::string>& a,
                                                         const fs::path& da,
                                                         const std::vector<std::string>& b,
                                                         const fs::path& db) {
  ezio::test::Run ra, rb;
  std::thread ta([&] { ra = as_user(kUserA, a, da); });
  std::thread tb([&] { rb = as_user(kUserB, b, db); });
  ta.join();
  tb.join();
  return {ra, rb};
}

TEST_F(Service, TwoUsersAtOnceSeeOnlyTheirOwn) {
  fs::path da = user_dir(kUserA, "both"), db = user_dir(kUserB, "both");
  auto [ra, rb] = both_at_once(busy_io_argv(suite.daemon->socket(), da, "a.bin"), da,
                               busy_io_argv(suite.daemon->socket(), db, "b.bin"), db);
  ASSERT_EQ(ra.status, 0) << ra.err;
  ASSERT_EQ(rb.status, 0) << rb.err;
  Seen a = seen_in(da / "trace", "-"), b = seen_in(db / "trace", "-");
  EXPECT_TRUE(a.files.count((da / "a.bin").string()));
  EXPECT_TRUE(b.files.count((db / "b.bin").string()));
  EXPECT_FALSE(a.files.count((db / "b.bin").string()));
  EXPECT_FALSE(b.files.count((da / "a.bin").string()));
  for (long pid : a.pids) EXPECT_FALSE(b.pids.count(pid)) << pid;
  EXPECT_EQ(owner_of(db / "trace" / "eziotrace.otf2"), suite.users->uid(kUserB));
}

// Operations a layer recorded (0 when the archive says it was not observed).
long operations(std::map<std::string, json>& counts, const std::string& layer) {
  long n = 0;
  for (const char* k : {"reads", "writes", "other"}) {
    const json& v = counts[layer][k];
    if (v.is_number()) n += v.get<long>();
  }
  return n;
}

// --layers is the session's: asked for the syscall layer only, a recording gets nothing of the
// others, while a recording at the same time on the same service gets every layer.
TEST_F(Service, EachRecordingGetsTheLayersItAskedFor) {
  fs::path da = user_dir(kUserA, "layers"), db = user_dir(kUserB, "layers");
  std::vector<std::string> few = busy_io_argv(suite.daemon->socket(), da, "a.bin");
  few.insert(few.begin() + 2, "--layers=syscall");
  auto [ra, rb] = both_at_once(few, da, busy_io_argv(suite.daemon->socket(), db, "b.bin"), db);
  ASSERT_EQ(ra.status, 0) << ra.err;
  ASSERT_EQ(rb.status, 0) << rb.err;
  EXPECT_EQ(ra.err.find("not applied"), std::string::npos) << ra.err;
  auto la = layer_counts(da / "trace"), lb = layer_counts(db / "trace");
  EXPECT_GT(operations(la, "Syscall"), 0) << ra.err;
  for (const char* layer : {"VFS", "FS", "Page cache", "Block"}) {
    EXPECT_EQ(la[layer]["writes"], "not observed") << layer << ": " << ra.err;
  }
  EXPECT_GT(operations(lb, "Syscall"), 0) << rb.err;
  EXPECT_GT(operations(lb, "VFS"), 0) << rb.err;
  EXPECT_GT(operations(lb, "FS"), 0) << rb.err;
  Seen a = seen_in(da / "trace", "-");
  EXPECT_EQ(a.props.value("EZIOTRACE::PROBE::vfs", ""), "") << a.props.dump();
}

// --no-probe-cache cannot reach the service's programs, loaded once: refused, not ignored.
TEST_F(Service, NoProbeCacheIsRefusedThroughTheService) {
  fs::path dir = user_dir(kUserA, "nocache");
  std::vector<std::string> argv = record_argv(suite.daemon->socket(), dir / "trace", {"true"});
  argv.insert(argv.begin() + 2, "--no-probe-cache");
  ezio::test::Run r = as_user(kUserA, argv, dir);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("--no-probe-cache cannot apply through eziotraced"), std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir / "trace"));
}

TEST_F(Service, RefusesProcessesNotTheUsersWaitingChild) {
  // Positive control: its own child before exec is accepted.
  EXPECT_EQ(as_user(kUserA, {EZIO_TRACE_CLIENT, suite.daemon->socket(), "own-child"}).out,
            "accepted\n");
  ezio::test::Run after_exec =
      as_user(kUserA, {EZIO_TRACE_CLIENT, suite.daemon->socket(), "exec-child"});
  EXPECT_NE(after_exec.out.find("refused: eziotraced refuses to trace"), std::string::npos)
      << after_exec.out << after_exec.err;
  EXPECT_NE(after_exec.out.find("exec"), std::string::npos) << after_exec.out;
  Background bs({"runuser", "-u", kUserB, "--", "sleep", "60"});
  Background as({"runuser", "-u", kUserA, "--", "sleep", "60"});
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // runuser has forked its sleep
  for (auto [bg, what] : {std::pair{&bs, "B's"}, std::pair{&as, "A's running"}}) {
    SCOPED_TRACE(what);
    pid_t sleeper = child_of(bg->pid());  // runuser's child, the sleep
    ASSERT_GT(sleeper, 0);
    ezio::test::Run r = as_user(
        kUserA, {EZIO_TRACE_CLIENT, suite.daemon->socket(), "pid", std::to_string(sleeper)});
    // Killed now: runuser's death would leave it running as the test user.
    end_process(sleeper);
    EXPECT_NE(r.out.find("is not a child of the requesting process"), std::string::npos) << r.out;
  }
  // Root's client, whose child became another user before asking: refused on the uid.
  ezio::test::Run setuid = run({EZIO_TRACE_CLIENT, suite.daemon->socket(), "setuid-child",
                                std::to_string(suite.users->uid(kUserB))});
  EXPECT_NE(setuid.out.find("not as the requesting user"), std::string::npos) << setuid.out;
  EXPECT_TRUE(suite.daemon->wait_sessions(0));
}

TEST_F(Service, UserOutsideTheGroupIsRefusedClearly) {
  fs::path dir = user_dir(kUserC, "refused");
  ezio::test::Run r =
      as_user(kUserC, record_argv(suite.daemon->socket(), dir / "trace", {"true"}), dir);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("you are not in group eziotrace"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "trace"));
  // The daemon refuses C itself too, even where the socket lets C in.
  chmod(suite.daemon->socket().c_str(), 0666);
  ezio::test::Run direct =
      as_user(kUserC, {EZIO_TRACE_CLIENT, suite.daemon->socket(), "own-child"});
  chmod(suite.daemon->socket().c_str(), 0660);
  EXPECT_NE(direct.out.find("may not record through eziotraced"), std::string::npos) << direct.out;
}

// A setuid program the user's application runs (mount) is not the user's to see: it leaves the
// session at its exec, while the shell that ran it stays recorded.
TEST_F(Service, SetuidProgramLeavesTheRecording) {
  fs::path dir = user_dir(kUserA, "setuid");
  std::string mine = (dir / "done").string();
  ezio::test::Run r = as_user(kUserA,
                              record_argv(suite.daemon->socket(), dir / "trace",
                                          {"sh", "-c", "mount >/dev/null; echo done > " + mine}),
                              dir);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("a process left the recording at the exec of a privileged program: "
                       "/usr/bin/mount"),
            std::string::npos)
      << r.err;
  Seen s = seen_in(dir / "trace", "-");
  EXPECT_TRUE(s.files.count(mine));
  EXPECT_FALSE(s.files.count("/proc/self/mountinfo")) << "the setuid mount's I/O was recorded";
  for (const auto& f : s.files) EXPECT_EQ(f.find("libmount"), std::string::npos) << f;
}

// One user cannot take every connection: the 17th of a user's is refused, root's are not counted.
TEST_F(Service, ConnectionsPerUserAreLimited) {
  ezio::test::Run r =
      as_user(kUserA, {EZIO_TRACE_CLIENT, suite.daemon->socket(), "connections", "16"});
  EXPECT_NE(r.out.find("refused: you have 16 connections to eziotraced open already"),
            std::string::npos)
      << r.out << r.err;
  EXPECT_EQ(as_user(kUserA, {EZIO_TRACE_CLIENT, suite.daemon->socket(), "connections", "15"}).out,
            "accepted\n");
  EXPECT_TRUE(suite.daemon->wait_sessions(0));
}

// The service's connections in all are limited too (root's count there): the 257th is refused.
TEST_F(Service, ConnectionsInAllAreLimited) {
  ASSERT_TRUE(suite.daemon->wait_sessions(0));
  EXPECT_NE(must_run({EZIO_TRACE_CLIENT, suite.daemon->socket(), "connections", "256"})
                .find("refused: eziotraced serves too many connections"),
            std::string::npos);
  EXPECT_EQ(must_run({EZIO_TRACE_CLIENT, suite.daemon->socket(), "connections", "255"}),
            "accepted\n");
  EXPECT_TRUE(suite.daemon->wait_sessions(0));
}

TEST_F(Service, KilledClientFreesItsSession) {
  ASSERT_TRUE(suite.daemon->wait_sessions(0));
  fs::path dir = user_dir(kUserA, "killed");
  Background client({"runuser", "-u", kUserA, "--", EZIO_BINARY, "record",
                     "--service=" + suite.daemon->socket(), "-o", (dir / "trace").string(), "--",
                     "sleep", "8"});
  ASSERT_TRUE(suite.daemon->wait_sessions(1)) << suite.daemon->status().dump();
  json st = suite.daemon->status();
  ASSERT_EQ(st["visible"].size(), 1u);
  pid_t pid = st["visible"][0]["pid"];
  pid_t application = child_of(pid);
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  EXPECT_TRUE(suite.daemon->wait_sessions(0)) << suite.daemon->status().dump();
  end_process(application);  // left running untraced by its killed recorder
}

std::set<long> all_bpf_ids(const std::string& kind) {
  json j = json::parse(must_run({"bpftool", "-j", kind, "show"}));
  std::set<long> ids;
  for (const auto& p : j) ids.insert(p["id"].get<long>());
  return ids;
}

TEST_F(Service, KilledServiceInterruptsTheArchiveAndLeavesNoPrograms) {
  ServiceDaemon own("dies");
  std::set<long> progs = bpf_objects_of(own.pid(), "prog_id");
  ASSERT_FALSE(progs.empty());
  fs::path dir = user_dir(kUserA, "dies");
  ezio::test::Run r;
  std::thread t([&] {
    r = as_user(kUserA,
                record_argv(own.socket(), dir / "trace",
                            {program("busy_io"), (dir / "x.bin").string(), "4"}),
                dir);
  });
  EXPECT_TRUE(own.wait_sessions(1));
  std::set<long> links;  // attached while the session runs (service_hooks_test.cpp)
  ASSERT_TRUE(wait_for([&] { return !(links = bpf_objects_of(own.pid(), "link_id")).empty(); }));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  own.kill_now();
  t.join();
  EXPECT_NE(r.err.find("eziotraced"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("recording interrupted"), std::string::npos) << r.err;
  json d = dump_archive(dir / "trace" / "eziotrace.otf2");
  EXPECT_EQ(d["properties"]["EZIOTRACE::STATUS"], "interrupted");
  // Why, for a merge of several hosts to name it (docs/cluster.md, "A host lost mid-job").
  EXPECT_NE(
      d["properties"]["EZIOTRACE::STATUS_REASON"].get<std::string>().find("loss counters unknown"),
      std::string::npos)
      << d["properties"];
  std::set<long> progs_now = all_bpf_ids("prog"), links_now = all_bpf_ids("link");
  for (long id : progs)
    EXPECT_FALSE(progs_now.count(id)) << "program " << id << " outlived the service";
  for (long id : links)
    EXPECT_FALSE(links_now.count(id)) << "link " << id << " outlived the service";
  // A service started again replaces the socket the dead one left.
  ServiceDaemon again("dies");
  EXPECT_EQ(again.status()["sessions"], 0);
}

TEST(ServiceUnits, SystemdAnalyzeVerifyIsClean) {
  fs::path dir = scratch_dir("units");
  bool had_group = getgrnam("eziotrace") != nullptr;
  ezio::test::Run install =
      run({EZIO_BINARY, "service", "install", "--no-start", "--unit-dir", dir.string()});
  ASSERT_EQ(install.status, 0) << install.err;
  EXPECT_NE(getgrnam("eziotrace"), nullptr) << "install made no group eziotrace";
  ezio::test::Run verify = run({"systemd-analyze", "verify", (dir / "eziotraced.socket").string(),
                                (dir / "eziotraced.service").string()});
  EXPECT_EQ(verify.status, 0) << verify.err;
  EXPECT_EQ(verify.err, "");
  // A unit file that differs is the administrator's: kept without --force.
  std::ofstream(dir / "eziotraced.socket") << "# mine\n";
  ezio::test::Run again =
      run({EZIO_BINARY, "service", "install", "--no-start", "--unit-dir", dir.string()});
  EXPECT_NE(again.status, 0);
  EXPECT_EQ(read_text(dir / "eziotraced.socket"), "# mine\n");
  // Refused on one unit, install writes no other: the missing service unit is not written before
  // the socket unit's refusal.
  fs::remove(dir / "eziotraced.service");
  ezio::test::Run refused =
      run({EZIO_BINARY, "service", "install", "--no-start", "--unit-dir", dir.string()});
  EXPECT_NE(refused.status, 0);
  EXPECT_FALSE(fs::exists(dir / "eziotraced.service")) << "written before the refusal";
  if (!had_group) run({"groupdel", "eziotrace"});
}

// What the socket unit does: systemd binds the socket and starts eziotraced on the first
// connection, passing the socket as fd 3 (LISTEN_FDS); the daemon serves it instead of its own.
TEST(ServiceUnits, ServesTheSocketSystemdPasses) {
  ServiceGroup group;
  fs::path dir = scratch_dir("activation");
  std::string sock = (dir / "activated.sock").string();
  Background activator({"systemd-socket-activate", "--seqpacket", "-l", sock, EZIO_DAEMON,
                        "--foreground", "--socket", (dir / "not-this-one.sock").string()});
  for (int i = 0; i < 100 && !fs::exists(sock); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  json st = recorder::service::ServiceClient(sock).status();
  EXPECT_EQ(st["sessions"], 0);
  EXPECT_FALSE(fs::exists(dir / "not-this-one.sock"));
}

}  // namespace
}  // namespace ezio::test
