// SPDX-License-Identifier: GPL-2.0-only
// Ctrl-C while the archive's writer thread is busy (ArchivePipeline: 1-byte dd, batches queued):
// the recording still ends in a readable archive that says it was interrupted, with every call
// the summary counts, in order, and the loss counters.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <thread>

#include "run.h"

namespace fs = std::filesystem;

TEST(RecordInterrupt, CtrlCWhileTheWriterIsBusyLeavesAWholeArchive) {
  auto dir = ezio::test::scratch_dir("interrupt_pipeline");
  auto file = dir / "f";
  auto log = dir / "log";
  pid_t pid = fork();
  if (pid == 0) {
    int null = open("/dev/null", O_WRONLY);
    int err = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(null, 1);
    dup2(err, 2);
    std::string of = "of=" + file.string();
    execl(EZIO_BINARY, "eziotrace", "record", "-v", "-o", (dir / "t").c_str(), "--", "dd",
          "if=/dev/zero", of.c_str(), "bs=1", "count=100000000", "status=none", (char*)nullptr);
    _exit(127);
  }
  // Interrupt once dd has written a good part of a batch (not on a timer).
  for (int i = 0; i < 6000 && (!fs::exists(file) || fs::file_size(file) < 200'000); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(fs::exists(file)) << "dd never started";
  kill(pid, SIGINT);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGINT);
  std::stringstream err;
  err << std::ifstream(log).rdbuf();
  std::smatch m;
  std::string text = err.str();
  ASSERT_TRUE(std::regex_search(text, m, std::regex(R"(\n\s+syscall\s+(\d+)\s)"))) << text;
  uint64_t recorded = std::stoull(m[1]);
  EXPECT_GT(recorded, 200'000u);
  EXPECT_NE(text.find("the archive's writer thread"), std::string::npos) << text;

  auto r =
      ezio::test::eziotrace({"layers", "--all", "--json", (dir / "t" / "eziotrace.otf2").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  uint64_t in_archive = 0;
  for (const auto& l : j["layers"]) {
    if (l["layer"] == "Syscall") {
      in_archive =
          l["reads"].get<uint64_t>() + l["writes"].get<uint64_t>() + l["other"].get<uint64_t>();
    }
  }
  EXPECT_EQ(in_archive, recorded);  // every call the summary counts was written, none twice
  const auto& meta = j["meta"];
  EXPECT_EQ(meta["status"], "interrupted");
  EXPECT_TRUE(meta["lost_events"].contains("syscall")) << meta;  // the loss counters are there
  EXPECT_EQ(meta["anomalies"]["backward_timestamps"], 0) << meta;
  EXPECT_EQ(meta["anomalies"]["unclosed_calls"], 0) << meta;
  EXPECT_FALSE(fs::exists(dir / "t.incomplete"));
}
