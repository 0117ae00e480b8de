// SPDX-License-Identifier: GPL-2.0-only
// eziotraced's programs run in every process's system calls while they are attached, recorded or
// not: they are loaded once, at the start, but attached only while a session needs them (the
// first session attaches them, the end of the last detaches them), and the sessions record fully
// across those changes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <thread>

#include "loop_fs.h"
#include "service_env.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace ezio::test {
namespace {

SuiteServices suite;

class Hooks : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { suite.start("hooks"); }
  static void TearDownTestSuite() { suite.stop(); }
};

bool attached() {
  return !bpf_objects_of(suite.daemon->pid(), "link_id").empty() ||
         perf_events_of(suite.daemon->pid()) > 0;
}

// `dd` writing `blocks` blocks of 4 KiB to `file` (nothing on stderr: its only writes are these).
std::string dd(const fs::path& file, int blocks) {
  return "dd if=/dev/zero of=" + file.string() + " bs=4096 count=" + std::to_string(blocks) +
         " status=none";
}

// `eziotrace record` through the test's service of `sh -c script`, as user A.
std::vector<std::string> record_sh(const fs::path& out, const std::string& script) {
  return {EZIO_BINARY, "record",     "--service=" + suite.daemon->socket(),
          "-o",        out.string(), "--",
          "sh",        "-c",         script};
}

// The write calls the syscall layer recorded, and their bytes.
std::pair<long, long> syscall_writes(const fs::path& archive) {
  json j = json::parse(
      must_run({EZIO_BINARY, "layers", "--json", (archive / "eziotrace.otf2").string()}));
  for (const auto& row : j["layers"]) {
    if (row["layer"] == "Syscall")
      return {row["writes"].get<long>(), row["write_bytes"].get<long>()};
  }
  throw std::runtime_error("no syscall layer in " + archive.string());
}

TEST_F(Hooks, IdleServiceHasNoProgramAttached) {
  ASSERT_TRUE(suite.daemon->wait_sessions(0));
  EXPECT_FALSE(bpf_objects_of(suite.daemon->pid(), "prog_id").empty()) << "no program loaded";
  EXPECT_TRUE(bpf_objects_of(suite.daemon->pid(), "link_id").empty());
  EXPECT_EQ(perf_events_of(suite.daemon->pid()), 0u);
}

TEST_F(Hooks, ASessionAttachesThemAndItsEndDetachesThem) {
  fs::path dir = user_dir(kUserA, "hooks-one");
  ASSERT_TRUE(wait_for([] { return !attached(); }));
  // The recording waits (for the file `go`) while the test looks at the service's links.
  ezio::test::Run r;
  std::thread t([&] {
    r = as_user(
        kUserA,
        record_sh(dir / "trace", dd(dir / "a", 20) + "; while [ ! -e go ]; do sleep 0.05; done; " +
                                     dd(dir / "b", 30)),
        dir);
  });
  EXPECT_TRUE(wait_for(attached)) << "a session runs, the programs are not attached";
  std::ofstream(dir / "go").flush();
  t.join();
  ASSERT_EQ(r.status, 0) << r.err;
  ASSERT_TRUE(suite.daemon->wait_sessions(0));
  EXPECT_TRUE(wait_for([] { return !attached(); })) << "no session, the programs stay attached";
  auto [writes, bytes] = syscall_writes(dir / "trace");
  EXPECT_EQ(writes, 50);
  EXPECT_EQ(bytes, 50 * 4096);
}

// B's recording starts and ends while A's runs: A's programs stay attached past B's end, and both
// record every write; then the last end detaches them.
TEST_F(Hooks, OverlappingSessionsBothRecordFully) {
  fs::path da = user_dir(kUserA, "hooks-a"), db = user_dir(kUserB, "hooks-b");
  ASSERT_TRUE(wait_for([] { return !attached(); }));
  ezio::test::Run ra, rb;
  std::thread ta([&] {
    ra = as_user(
        kUserA,
        record_sh(da / "trace", dd(da / "a", 10) + "; while [ ! -e go ]; do sleep 0.05; done; " +
                                    dd(da / "b", 15)),
        da);
  });
  ASSERT_TRUE(wait_for(attached));
  rb = as_user(kUserB, record_sh(db / "trace", dd(db / "c", 7)), db);
  ASSERT_EQ(rb.status, 0) << rb.err;
  EXPECT_TRUE(attached()) << "B's end detached A's programs";
  std::ofstream(da / "go").flush();
  ta.join();
  ASSERT_EQ(ra.status, 0) << ra.err;
  EXPECT_EQ(syscall_writes(da / "trace"), std::make_pair(25L, 25L * 4096));
  EXPECT_EQ(syscall_writes(db / "trace"), std::make_pair(7L, 7L * 4096));
  ASSERT_TRUE(suite.daemon->wait_sessions(0));
  EXPECT_TRUE(wait_for([] { return !attached(); }));
}

}  // namespace
}  // namespace ezio::test
