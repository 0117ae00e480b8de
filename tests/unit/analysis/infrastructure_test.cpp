// SPDX-License-Identifier: GPL-2.0-only
// An MPI run's report is about the ranks, not the launcher (issue #28, §3): the processes' roles,
// the launcher's and start-up I/O counted apart in every analyzer (and with --all, as before), the
// user's command rather than eziotrace's rewriting of it.
#include <gtest/gtest.h>

#include <fstream>

#include "analysis/model/process_role.h"
#include "analysis/model/trace_reader.h"
#include "tests/support/run_cli.h"
#include "tests/support/trace_builder.h"
#include "tests/unit/analysis/test_util.h"

namespace ezio::test {
namespace {

using analysis::ProcessRole;
using nlohmann::json;

constexpr uint64_t kLibBytes = 1 << 20, kData = 16384;

// mpiexec [10] -> hydra_pmi_proxy [11] -> ranks prog [100] (thread 101) and prog [200] (201);
// rank 100 ran `rm` [300]. The launcher reads /etc/hosts and writes its own log many times in
// small pieces; rank 100 reads a library (and its pages fault in: a block read in no call) and
// writes its data, which reaches the device.
std::string mpi_archive(const TempDir& dir) {
  TraceBuilder b(dir / "trace");
  b.property("EZIOTRACE::COMMAND", "mpiexec -genv LD_PRELOAD /x/libeztrace.so -np 2 ./prog");
  b.property("EZIOTRACE::USER_COMMAND", "mpiexec -np 2 ./prog");
  b.process(10, 1, "mpiexec.hydra", {10});
  b.process(11, 10, "hydra_pmi_proxy", {11});
  b.process(200, 11, "prog", {201});
  b.process(300, 100, "rm", {301});
  uint64_t t = 1000;
  otf2::Ref hosts = b.file("/etc/hosts", 3), log = b.file("/tmp/hydra.log", 4);
  b.open(10, t, t + 10, hosts);
  b.rw(10, t + 20, t + 30, hosts, false, 200);
  for (int i = 0; i < 8; ++i, t += 100) b.rw(11, t, t + 50, log, true, 10);
  otf2::Ref lib = b.file("/usr/lib/libmpi.so.12", 5), out = b.file("/data/out", 6);
  b.rw(101, t, t + 100, lib, false, kLibBytes);
  uint64_t id = b.rw(101, t + 200, t + 300, out, true, kData, 0);
  b.rw(201, t + 200, t + 300, b.file("/data/out2", 3), true, kData, 0);
  b.block_pid(100);
  b.block(t + 110, t + 190, false, kLibBytes, 4096);  // the library's pages, faulted in
  b.block(t + 400, t + 500, true, kData, 8192, id);
  return b.close().string();
}

json run_json(const std::vector<std::string>& args) {
  RunResult r = run(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(r.out);
}

TEST(ProcessRoles, LauncherRanksHelpers) {
  TempDir dir;
  analysis::TraceReader reader(mpi_archive(dir));
  analysis::ProcessRoles roles(reader.defs());
  EXPECT_TRUE(roles.has_launcher());
  EXPECT_EQ(roles.of_pid(10), ProcessRole::kLauncher);
  EXPECT_EQ(roles.of_pid(11), ProcessRole::kLauncher);
  EXPECT_EQ(roles.of_pid(200), ProcessRole::kRank);
  EXPECT_EQ(roles.of_pid(300), ProcessRole::kHelper);
  for (const char* l : {"mpirun", "mpiexec.hydra", "mpirun.openmpi", "orted", "prted", "srun",
                        "slurmstepd", "/usr/bin/mpiexec"})
    EXPECT_TRUE(analysis::is_launcher_name(l)) << l;
  for (const char* p : {"prog", "mpiio_calls", "python3", "mpirunner"})
    EXPECT_FALSE(analysis::is_launcher_name(p)) << p;
}

TEST(Infrastructure, LayersCountTheRanksDataApart) {
  TempDir dir;
  std::string trace = mpi_archive(dir);
  json j = run_json({cli_path(), "layers", trace, "--json"});
  json sys = find_row(j["layers"], {{"layer", "Syscall"}});
  EXPECT_EQ(sys["read_bytes"], 0) << sys;
  EXPECT_EQ(sys["write_bytes"], 2 * kData) << sys;
  // No application read reached the device (this archive does not say the block layer saw reads:
  // "not observed" rather than 0).
  EXPECT_NE(find_row(j["layers"], {{"layer", "Block"}})["read_bytes"], kLibBytes);
  // The funnel's share is the application's: its write reached the device once, not 3×.
  EXPECT_EQ(find_row(j["cache"], {{"operation", "write"}})["block_bytes"], kData);
  json infra = find_row(j["infrastructure"], {{"layer", "Syscall"}});
  EXPECT_EQ(infra["read_bytes"], kLibBytes + 200) << j["infrastructure"];
  EXPECT_EQ(infra["write_bytes"], 80);
  EXPECT_EQ(find_row(j["infrastructure"], {{"layer", "Block"}})["read_bytes"], kLibBytes);
  EXPECT_EQ(j["meta"]["command"], "mpiexec -np 2 ./prog");

  json all = run_json({cli_path(), "layers", trace, "--json", "--all"});
  EXPECT_EQ(find_row(all["layers"], {{"layer", "Syscall"}})["read_bytes"], kLibBytes + 200);
  EXPECT_FALSE(all.contains("infrastructure"));
}

TEST(Infrastructure, FilesLatencyProfileShowItApart) {
  TempDir dir;
  std::string trace = mpi_archive(dir);
  json f = run_json({cli_path(), "files", trace, "--json"});
  for (auto& row : f["files"]) EXPECT_EQ(row["origin"], "application") << row;
  EXPECT_FALSE(find_row(f["files"], {{"file", "/data/out"}}).is_null());
  EXPECT_EQ(find_row(f["infrastructure"], {{"kind", "launcher"}, {"layer", "syscall"}})["files"],
            2);
  json fa = run_json({cli_path(), "files", trace, "--json", "--all"});
  EXPECT_FALSE(find_row(fa["files"], {{"file", "/tmp/hydra.log"}}).is_null());

  json l = run_json({cli_path(), "latency", trace, "--json"});
  EXPECT_EQ(find_row(l["latency"], {{"layer", "syscall"}, {"operation", "write"}})["count"], 2);
  EXPECT_EQ(find_row(l["infrastructure"], {{"layer", "syscall"}, {"operation", "write"}})["count"],
            8);

  json p = run_json({cli_path(), "profile", trace, "--json", "--total"});
  json all_write = find_row(p["profile"], {{"thread", "All threads"}, {"function", "pwrite64"}});
  EXPECT_EQ(all_write["count"], 2) << p["profile"];
  EXPECT_EQ(find_row(p["profile"], {{"thread", "Infrastructure"}, {"function", "write"}})["count"],
            8);
}

TEST(Infrastructure, AdviceIsNotAboutTheLauncher) {
  TempDir dir;
  std::string trace = mpi_archive(dir);
  std::string config = (dir / "t.json").string();
  std::ofstream(config) << json{{"small_min_count", 4}}.dump();
  json a = run_json({cli_path(), "advise", trace, "--json", "--config", config});
  EXPECT_TRUE(a["findings"].empty()) << a["findings"].dump(2);
  bool launcher_left_out = false;
  for (auto& l : a["left_out"]) launcher_left_out |= l["origin"] == "launcher";
  EXPECT_TRUE(launcher_left_out) << a["left_out"];
  json all = run_json({cli_path(), "advise", trace, "--json", "--config", config, "--all"});
  size_t small = 0;
  for (auto& f : all["findings"]) small += f["rule"] == "small-requests";
  EXPECT_EQ(small, 1u) << all["findings"].dump(2);
}

TEST(Infrastructure, ReportShowsTheUsersCommandAndTheInfrastructureLine) {
  TempDir dir;
  std::string trace = mpi_archive(dir);
  std::string page = (dir / "r.html").string();
  RunResult r = run({cli_path(), "report", trace, "-o", page});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(page);
  std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(html.find("<code>mpiexec -np 2 ./prog</code>"), std::string::npos);
  EXPECT_EQ(html.find("LD_PRELOAD"), std::string::npos);
  EXPECT_NE(html.find("id=\"infrastructure\""), std::string::npos);
}

// A plain program (no launcher): its data as before, only its start-up apart.
TEST(Infrastructure, PlainProgramOnlyStartupApart) {
  TempDir dir;
  TraceBuilder b(dir / "trace");
  otf2::Ref lib = b.file("/lib/x86_64-linux-gnu/libc.so.6", 3), out = b.file("/data/out", 4);
  b.rw(101, 1000, 1100, lib, false, 832);
  b.rw(101, 1200, 1300, out, true, kData);
  b.rw(102, 1200, 1300, out, true, kData);
  std::string trace = b.close().string();
  json j = run_json({cli_path(), "layers", trace, "--json"});
  json sys = find_row(j["layers"], {{"layer", "Syscall"}});
  EXPECT_EQ(sys["writes"], 2);
  EXPECT_EQ(sys["reads"], 0);
  EXPECT_EQ(find_row(j["infrastructure"], {{"layer", "Syscall"}})["read_bytes"], 832);
}

}  // namespace
}  // namespace ezio::test
