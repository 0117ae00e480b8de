// SPDX-License-Identifier: GPL-2.0-only
// A report about the ranks, not the launcher (issue #28, §3; docs/analysis.md, "The application
// and the infrastructure"): tests/programs/mpiio/mpiio_calls.c under `eziotrace -t
// mpich,mpiio,posixio -- mpiexec.mpich -np 2`, and a plain dd. The analyzers show the user's
// command, name neither the launcher nor start-up files in any finding, and count the launcher's
// and the loader's I/O apart; a plain program's data is counted as before.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "run.h"

namespace fs = std::filesystem;
using ezio::test::program;
using nlohmann::json;

namespace {

json analyze(const std::vector<std::string>& args) {
  std::vector<std::string> a = args;
  a.push_back("--json");
  auto r = ezio::test::eziotrace(a);
  EXPECT_EQ(r.status, 0) << r.err;
  return json::parse(r.out);
}

json row(const json& table, const std::string& key, const std::string& value) {
  for (auto& r : table) {
    if (r[key] == value) return r;
  }
  return nullptr;
}

TEST(RanksReport, MpiRunSpeaksOfTheRanks) {
  ASSERT_TRUE(fs::exists(program("mpiio_calls_mpich")))
      << "MPICH is missing (run scripts/setup.sh)";
  fs::path dir = ezio::test::scratch_dir("ranks-report");
  fs::path out = dir / "out";
  std::vector<std::string> command = {"mpiexec.mpich", "-np", "2", program("mpiio_calls_mpich"),
                                      dir.string()};
  std::vector<std::string> args = {"-t", "mpich,mpiio,posixio", "-o", out.string(), "--"};
  args.insert(args.end(), command.begin(), command.end());
  auto r = ezio::test::eziotrace(args);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  std::string typed;
  for (auto& w : command) typed += (typed.empty() ? "" : " ") + w;

  json layers = analyze({"layers", out.string()});
  EXPECT_EQ(layers["meta"]["command"], typed);
  json infra = row(layers["infrastructure"], "layer", "Syscall");
  ASSERT_FALSE(infra.is_null()) << layers.dump(2);
  EXPECT_GT(infra["reads"].get<uint64_t>(), 0u);  // the loader, /proc/net/route, /etc/hosts

  json advice = analyze({"advise", out.string()});
  for (auto& f : advice["findings"]) {
    for (auto& w : f["where"]) {
      std::string where = w;
      for (const char* not_the_ranks : {"mpiexec", "hydra_pmi_proxy", "/proc/", "/etc/", ".so"})
        EXPECT_EQ(where.find(not_the_ranks), std::string::npos) << f.dump(2);
    }
  }
  bool launcher = false;
  for (auto& l : advice["left_out"])
    launcher |= l["origin"] == "launcher" || l["origin"] == "system";
  EXPECT_TRUE(launcher) << advice["left_out"];

  fs::path page = dir / "report.html";
  auto rep = ezio::test::eziotrace({"report", out.string(), "-o", page.string()});
  ASSERT_EQ(rep.status, 0) << rep.err;
  std::string html = ezio::test::read_text(page);
  EXPECT_NE(html.find("<code>" + typed + "</code>"), std::string::npos);
  EXPECT_EQ(html.find("-genv"), std::string::npos);
  EXPECT_NE(html.find("id=\"infrastructure\""), std::string::npos);
  // MPI-IO calls: the collective tab and section; no HDF5 call: no datasets tab.
  EXPECT_NE(html.find("<a href=\"#collective\">Collective</a>"), std::string::npos);
  EXPECT_NE(html.find("<section id=\"collective\">"), std::string::npos);
  EXPECT_EQ(html.find("href=\"#datasets\""), std::string::npos);
}

// A plain program: its data exactly, with or without --all; only its start-up apart.
TEST(RanksReport, PlainProgramUnchanged) {
  fs::path dir = ezio::test::scratch_dir("ranks-plain");
  fs::path out = dir / "out";
  auto r = ezio::test::eziotrace({"record", "-o", out.string(), "--", "dd", "if=/dev/zero",
                                  "of=" + (dir / "data").string(), "bs=64K", "count=16"});
  ASSERT_EQ(r.status, 0) << r.err;
  json app = analyze({"files", out.string(), "--file", (dir / "data").string()});
  json all = analyze({"files", out.string(), "--file", (dir / "data").string(), "--all"});
  json a = row(app["files"], "layer", "syscall"), b = row(all["files"], "layer", "syscall");
  ASSERT_FALSE(a.is_null()) << app.dump(2);
  EXPECT_EQ(a["write_bytes"], 16 * 65536);
  EXPECT_EQ(a, b);
  json layers = analyze({"layers", out.string()});
  EXPECT_FALSE(row(layers["infrastructure"], "layer", "Syscall").is_null());  // dd's start-up
  // No MPI-IO call: neither the collective tab nor its section.
  fs::path page = dir / "report.html";
  ASSERT_EQ(ezio::test::eziotrace({"report", out.string(), "-o", page.string()}).status, 0);
  std::string html = ezio::test::read_text(page);
  EXPECT_EQ(html.find("href=\"#collective\""), std::string::npos);
  EXPECT_EQ(html.find("id=\"collective\""), std::string::npos);
}

}  // namespace
