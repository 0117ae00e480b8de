// SPDX-License-Identifier: GPL-2.0-only
// Which eziotrace wrote what (root, BPF for the recordings): `--version` of eziotrace and
// eziotraced, EZIOTRACE::VERSION in a kernel archive and a merged one (read by python3-otf2), and
// "eziotrace_version" in the analyzers' JSON.
#include "common/version.h"

#include <gtest/gtest.h>

#include "run.h"

namespace fs = std::filesystem;
using ezio::test::run;
using nlohmann::json;

namespace {

TEST(Version, BothProgramsPrintTheirVersion) {
  const std::string version = ezio::version_string();
  EXPECT_TRUE(version.starts_with(EZIO_PROJECT_VERSION)) << version;
  for (const auto& [binary, name] :
       {std::pair{EZIO_BINARY, "eziotrace"}, std::pair{EZIO_DAEMON, "eziotraced"}}) {
    auto r = run({binary, "--version"});
    EXPECT_EQ(r.status, 0) << name << ": " << r.err;
    EXPECT_EQ(r.out, std::string(name) + " " + version + "\n") << name;
  }
}

TEST(Version, ArchivesAndAnalyzersSayWhichVersionWroteThem) {
  const std::string version = ezio::version_string();
  fs::path dir = ezio::test::scratch_dir("merge-version");
  auto rec = ezio::test::eziotrace(
      {"record", "-o", (dir / "kernel").string(), "--", "cat", "/etc/hostname"});
  ASSERT_EQ(rec.status, 0) << rec.err;
  json kernel = ezio::test::dump_archive(dir / "kernel/eziotrace.otf2");
  EXPECT_EQ(kernel["properties"]["EZIOTRACE::VERSION"], version);

  auto merged_run =
      ezio::test::eziotrace({"-o", (dir / "merged").string(), "--", "cat", "/etc/hostname"});
  ASSERT_EQ(merged_run.status, 0) << merged_run.err;
  json merged = ezio::test::dump_archive(dir / "merged/eziotrace.otf2");
  EXPECT_EQ(merged["properties"]["EZIOTRACE::VERSION"], version);
  EXPECT_EQ(merged["properties"]["EZIOTRACE::RECORDER_VERSION"], version);

  for (const char* analyzer : {"files", "advise"}) {
    auto a = ezio::test::eziotrace({analyzer, "--json", (dir / "merged").string()});
    ASSERT_EQ(a.status, 0) << analyzer << ": " << a.err;
    json j = json::parse(a.out);
    EXPECT_EQ(j["eziotrace_version"]["analyzer"], version) << analyzer;
    EXPECT_EQ(j["eziotrace_version"]["archive"], version) << analyzer;
  }
}

}  // namespace
