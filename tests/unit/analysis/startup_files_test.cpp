// SPDX-License-Identifier: GPL-2.0-only
// What the loader, the C library and the tracer's start-up read, and the descriptors inherited from
// the launcher, are not the application's I/O: advise speaks of the application's files only and
// names the others as left out; `files` marks each file's origin (issue #27).
#include <gtest/gtest.h>

#include <fstream>

#include "analysis/model/file_origin.h"
#include "tests/support/run_cli.h"
#include "tests/support/trace_builder.h"
#include "tests/unit/analysis/test_util.h"

namespace ezio::test {
namespace {

using analysis::FileOrigin;
using nlohmann::json;

TEST(FileOrigin, Classification) {
  using analysis::file_origin;
  for (const char* p :
       {"/usr/lib/x86_64-linux-gnu/libc.so.6", "/lib/x86_64-linux-gnu/libm.so.6",
        "/etc/ld.so.cache", "/usr/lib/locale/locale-archive", "/usr/share/locale/locale.alias",
        "/opt/eztrace/lib/libeztrace-lib.so", "/work/build/bin/libeziotrace-preload.so",
        "/home/u/lib/libfoo.so.1.2.3", "/proc/self/maps", "/sys/devices/system/cpu/online"}) {
    EXPECT_EQ(file_origin(p, false), FileOrigin::kSystem) << p;
  }
  EXPECT_EQ(file_origin("/proc/self/coredump_filter", true), FileOrigin::kSystem);
  for (const char* p : {"/dev/shm/mpich_shar_tmpXB8Eet", "/dev/shm/vader_segment.node.0.1"})
    EXPECT_EQ(file_origin(p, true), FileOrigin::kSystem) << p;
  EXPECT_EQ(file_origin("/dev/shm/my_data", true), FileOrigin::kApplication);
  for (const char* p : {"/sys", "/proc", "/dev/urandom"})
    EXPECT_EQ(file_origin(p, false), FileOrigin::kSystem) << p;
  for (const char* p : {"<fd 1 of pid 7: opened before tracing, or by a call not traced>",
                        "/dev/pts/3", "pipe:[12345]", "stdout"}) {
    EXPECT_EQ(file_origin(p, true), FileOrigin::kInherited) << p;
  }
  // The application's: its data, wherever it is, and system paths it writes.
  for (const char* p : {"/data/out", "/tmp/x.so.bak", "/home/u/libdata.sosomething", "/dev/null"})
    EXPECT_EQ(file_origin(p, false), FileOrigin::kApplication) << p;
  EXPECT_EQ(file_origin("/etc/myapp.conf", true), FileOrigin::kApplication);
  EXPECT_EQ(file_origin("/usr/lib/x86_64-linux-gnu/libc.so.6", true), FileOrigin::kApplication);
  EXPECT_EQ(analysis::origin_key(FileOrigin::kSystem), "system");
}

// A program's start as the demo's archive shows it: the loader and EZTrace read libraries, the C
// library its locale files, stdout is inherited; then, optionally, the application's small writes.
std::string startup_archive(const TempDir& dir, bool user_writes) {
  TraceBuilder b(dir / "trace");
  uint64_t t = 1000;
  int fd = 3;
  for (const char* lib : {"/etc/ld.so.cache", "/lib/x86_64-linux-gnu/libc.so.6",
                          "/opt/eztrace/lib/libeztrace-lib.so", "/usr/share/locale/locale.alias"}) {
    otf2::Ref f = b.file(lib, fd);
    b.open(101, t, t + 10, f);
    for (int i = 0; i < 5; ++i, t += 100) b.rw(101, t + 20, t + 30, f, false, 832);
    b.call(101, "close", t, t + 10);
    t += 100;
  }
  otf2::Ref out = b.inherited(1);
  for (int i = 0; i < 5; ++i, t += 100) b.rw(101, t, t + 10, out, true, 20);
  if (user_writes) {
    otf2::Ref f = b.file("/data/out", fd);
    b.open(101, t, t + 10, f);
    for (int i = 0; i < 5; ++i, t += 100) b.rw(101, t + 20, t + 30, f, true, 100);
  }
  std::string config = (dir / "thresholds.json").string();
  std::ofstream(config) << json{{"small_min_count", 4}, {"reopen_min_count", 1}}.dump();
  return b.close().string();
}

TEST(StartupFiles, AdviseNamesOnlyTheApplicationsFiles) {
  TempDir dir;
  std::string anchor = startup_archive(dir, true), config = (dir / "thresholds.json").string();
  RunResult r = run({cli_path(), "advise", anchor, "--config", config, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  json small = nullptr;
  for (auto& f : j["findings"]) {
    for (auto& w : f["where"]) {
      std::string where = w;
      EXPECT_EQ(where.find("/data/out"), 0u) << f["rule"] << ": " << where;
    }
    if (f["rule"] == "small-requests") small = f;
  }
  ASSERT_FALSE(small.is_null()) << j["findings"].dump(2);
  EXPECT_EQ(small["where"], json::array({"/data/out (5)"}));
  EXPECT_EQ(small["numbers"]["small"], 5);
  EXPECT_EQ(small["numbers"]["accesses"], 5);
  std::map<std::string, std::string> left;
  for (auto& l : j["left_out"]) left[l["file"]] = l["origin"];
  EXPECT_EQ(left.size(), 5u);
  EXPECT_EQ(left["/lib/x86_64-linux-gnu/libc.so.6"], "system");
  EXPECT_EQ(left["/opt/eztrace/lib/libeztrace-lib.so"], "system");
  EXPECT_EQ(left["/usr/share/locale/locale.alias"], "system");
  EXPECT_EQ(left["/etc/ld.so.cache"], "system");
  EXPECT_EQ(left["<fd 1 of pid 100: opened before tracing, or by a call not traced>"], "inherited");

  r = run({cli_path(), "advise", anchor, "--config", config});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("where:    /data/out (5)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("where:    /lib"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("where:    <fd"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("left out: 4 start-up and system files"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("left out: 1 descriptors inherited"), std::string::npos) << r.out;
}

TEST(StartupFiles, StartupAloneMakesNoFinding) {
  TempDir dir;
  std::string anchor = startup_archive(dir, false), config = (dir / "thresholds.json").string();
  RunResult r = run({cli_path(), "advise", anchor, "--config", config, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_TRUE(j["findings"].empty()) << j["findings"].dump(2);
  EXPECT_EQ(j["left_out"].size(), 5u);
}

// By default `files` lists the application's files and counts the others apart (the
// infrastructure table); with --all every file is listed with its origin.
TEST(StartupFiles, FilesMarksTheOrigin) {
  TempDir dir;
  std::string anchor = startup_archive(dir, true);
  RunResult d = run({cli_path(), "files", anchor, "--json"});
  ASSERT_EQ(d.exit_code, 0) << d.err;
  json by_default = json::parse(d.out);
  for (auto& row : by_default["files"]) EXPECT_EQ(row["origin"], "application") << row;
  EXPECT_EQ(
      find_row(by_default["infrastructure"], {{"kind", "system"}, {"layer", "syscall"}})["files"],
      4);
  RunResult r = run({cli_path(), "files", anchor, "--json", "--all"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(find_row(j["files"], {{"file", "/data/out"}})["origin"], "application");
  EXPECT_EQ(find_row(j["files"], {{"file", "/lib/x86_64-linux-gnu/libc.so.6"}})["origin"],
            "system");
  EXPECT_EQ(
      find_row(j["files"],
               {{"file",
                 "<fd 1 of pid 100: opened before tracing, or by a call not traced>"}})["origin"],
      "inherited");
}

}  // namespace
}  // namespace ezio::test
