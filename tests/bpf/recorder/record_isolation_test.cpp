// SPDX-License-Identifier: GPL-2.0-only
// An unrelated process doing I/O during a recording must not appear in it.
#include <gtest/gtest.h>

#include "run.h"

using ezio::test::program;

TEST(RecordIsolation, UnrelatedProcessIsNotRecorded) {
  auto dir = ezio::test::scratch_dir("isolation");
  auto unrelated_file = dir / "unrelated.bin";
  pid_t bystander;
  ezio::test::Run r;
  {
    ezio::test::Background busy({program("busy_io"), unrelated_file.string(), "20"});
    bystander = busy.pid();
    r = ezio::test::eziotrace({"record", "-o", (dir / "trace").string(), "--",
                               program("io_sequence"), (dir / "d").string(), program("write3"),
                               (dir / "c").string()});
  }
  ASSERT_EQ(r.status, 0) << r.err;
  auto j = ezio::test::dump_archive(dir / "trace" / "eziotrace.otf2");
  ASSERT_FALSE(j.is_null());
  for (const auto& [id, loc] : j["locations"].items()) {
    EXPECT_NE(loc["props"]["EZIOTRACE::PID"], bystander);
    for (const auto& c : loc["calls"]) {
      for (const auto& io : c["io"]) {
        if (io.contains("file")) {
          EXPECT_NE(io["file"], unrelated_file.string());
        }
      }
    }
  }
}
