// SPDX-License-Identifier: GPL-2.0-only
// The analyzers on a real EZTrace 2.0 archive (with its definition defects), recorded here with
// `eztrace -t posixio`: the profile must match per-region counts and times computed independently
// with python3-otf2, and the file view must see exactly the bytes the program wrote.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "tests/support/run_cli.h"
#include "tests/unit/analysis/test_util.h"

namespace ezio::test {
namespace {

using nlohmann::json;

class EztraceArchive : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    if (run({"sh", "-c", "command -v eztrace"}).exit_code != 0) {
      setup_error_ = "precondition missing: eztrace is not installed";
      return;
    }
    if (run({"/usr/bin/python3", "-c", "import _otf2"}).exit_code != 0) {
      setup_error_ = "precondition missing: /usr/bin/python3 has no otf2 module (python3-otf2)";
      return;
    }
    // EZTrace writes ./<prog>_trace in the working directory.
    RunResult r = run({"sh", "-c",
                       "cd '" + dir_->path().string() + "' && eztrace -t posixio '" +
                           EZIO_EZTRACE_APP + "' '" + dir_->path().string() + "'"},
                      120);
    trace_ = dir_->path() / "analysis_eztrace_app_trace";
    if (r.exit_code != 0 || !std::filesystem::exists(trace_ / "eztrace_log.otf2")) {
      setup_error_ = "recording with eztrace failed: " + r.out + r.err;
    }
  }
  static void TearDownTestSuite() { delete dir_; }
  void SetUp() override {
    // A failed recording must fail the tests, not skip them silently.
    ASSERT_TRUE(setup_error_.empty()) << setup_error_;
  }
  static json cli_json(const std::string& cmd, std::vector<std::string> extra = {}) {
    std::vector<std::string> argv = {cli_path(), cmd, trace_.string(), "--json"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    RunResult r = run(argv);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out);
  }

  static TempDir* dir_;
  static std::filesystem::path trace_;
  static std::string setup_error_;
};

TempDir* EztraceArchive::dir_ = nullptr;
std::filesystem::path EztraceArchive::trace_;
std::string EztraceArchive::setup_error_;

TEST_F(EztraceArchive, ProfileMatchesPythonOtf2) {
  RunResult py =
      run({"/usr/bin/python3", EZIO_OTF2_REFERENCE, (trace_ / "eztrace_log.otf2").string()});
  ASSERT_EQ(py.exit_code, 0) << py.err;
  json expected = json::parse(py.out);
  ASSERT_GE(expected.size(), 8u);
  ASSERT_EQ(expected["write"]["count"], 40);  // 20 per thread: the program's own count

  json total = json::array();
  json profile = cli_json("profile");
  for (auto& row : profile["profile"]) {
    if (row["thread"] == "All threads") total.push_back(row);
  }
  ASSERT_EQ(total.size(), expected.size());
  for (auto& row : total) {
    std::string name = row["function"];
    ASSERT_TRUE(expected.contains(name)) << name;
    EXPECT_EQ(row["count"], expected[name]["count"]) << name;
    double ticks = expected[name]["inclusive_ticks"].get<double>();
    EXPECT_NEAR(row["inclusive_s"].get<double>() * 1e9, ticks, 1e-6 * ticks + 1e-3) << name;
  }
}

TEST_F(EztraceArchive, PerThreadSections) {
  std::set<std::string> threads;
  json profile = cli_json("profile", {"--region", "write"});
  for (auto& row : profile["profile"]) {
    if (row["function"] != "write") continue;  // fwrite matches too
    threads.insert(row["thread"]);
    EXPECT_EQ(row["count"], row["thread"] == "All threads" ? 40 : 20);
  }
  EXPECT_EQ(threads.size(), 3u);  // two threads and the total
}

TEST_F(EztraceArchive, FilesSeeTheProgramsBytes) {
  json files = cli_json("files")["files"];
  // 20 writes of 512 * (i % 8 + 1) bytes per file.
  for (const char* name : {"/data0.bin", "/data1.bin"}) {
    json row = nullptr;
    for (auto& r : files) {
      std::string f = r["file"];
      if (f.size() > 10 && f.substr(f.size() - 10) == name) row = r;
    }
    ASSERT_FALSE(row.is_null()) << name;
    EXPECT_EQ(row["layer"], "user");
    EXPECT_EQ(row["writes"], 20);
    EXPECT_EQ(row["write_bytes"], 41984);
    EXPECT_EQ(row["read_bytes"], 41984 + 100);
  }
  json layers = cli_json("layers")["layers"];
  EXPECT_EQ(find_row(layers, {{"layer", "User"}})["writes"], 41);  // 40 write + 1 fwrite
  json lat = cli_json("latency")["latency"];
  EXPECT_EQ(find_row(lat, {{"layer", "user"}, {"operation", "read"}})["count"], 26);
}

}  // namespace
}  // namespace ezio::test
