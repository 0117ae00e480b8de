// An unrelated process doing I/O during a recording must not appear in it.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run.h"

using ezio::test::program;

TEST(RecordIsolation, UnrelatedProcessIsNotRecorded) {
  auto dir = ezio::test::scratch_dir("isolation");
  auto unrelated_file = dir / "unrelated.bin";
  pid_t bystander = fork();
  if (bystander == 0) {
    execl(program("busy_io").c_str(), "busy_io", unrelated_file.c_str(), "20", (char*)nullptr);
    _exit(127);
  }
  auto r = ezio::test::eziotrace({"record", "-o", (dir / "trace").string(), "--",
                                  program("io_sequence"), (dir / "d").string(), program("write3"),
                                  (dir / "c").string()});
  kill(bystander, SIGKILL);
  waitpid(bystander, nullptr, 0);
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
