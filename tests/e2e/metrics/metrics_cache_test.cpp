// SPDX-License-Identifier: GPL-2.0-only
// The series each thread keeps cached (bpf/metrics_cache.bpf.h) follow the thread's cgroup: one
// process moved from one cgroup to another in the middle of its I/O is charged to each cgroup
// exactly the part it did there.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "loop_fs.h"
#include "metrics_env.h"

namespace ezio::test {
namespace {

constexpr long kBlock = 4096;

// Writes blocks × 4 KiB to fd (a FIFO dd reads).
void feed(int fd, long blocks) {
  std::vector<char> buf(kBlock, 'x');
  for (long i = 0; i < blocks; ++i)
    ASSERT_EQ(write(fd, buf.data(), buf.size()), kBlock) << "block " << i;
}

double written(int port, const std::string& cgroup) {
  return sample_sum(scrape(port), "eziotrace_syscall_bytes_total",
                    {{"cgroup", cgroup}, {"op", "write"}});
}

TEST(MetricsCache, ProcessMovedBetweenCgroupsIsChargedEachItsPart) {
  LoopFs disk("raw");
  TestCgroup ca("ezio_metrics_move_a"), cb("ezio_metrics_move_b");
  int port = free_port();
  MetricsDaemon daemon({"--metrics", std::to_string(port)});
  std::filesystem::path fifo =
      std::filesystem::temp_directory_path() / ("ezio-metrics-move-" + std::to_string(getpid()));
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  // One dd, one thread, for the whole run: its cached series must follow it to B.
  pid_t dd = ca.spawn({"dd", "if=" + fifo.string(), "of=/dev/" + disk.device(), "bs=4096",
                       "iflag=fullblock", "status=none"});
  int in = open(fifo.c_str(), O_WRONLY | O_CLOEXEC);
  ASSERT_GE(in, 0);
  const long part_a = 1000, part_b = 3000;
  feed(in, part_a);
  // Moved only once it has written all of A's part (the FIFO holds some of it meanwhile).
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (written(port, ca.path()) < part_a * kBlock && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_EQ(written(port, ca.path()), part_a * kBlock) << "dd did not write A's part";
  cb.adopt(dd);
  feed(in, part_b);
  close(in);
  expect_success(dd);
  std::filesystem::remove(fifo);
  std::string text = scrape(port);
  auto sum = [&](const char* name, const std::string& cgroup, const char* op) {
    std::map<std::string, std::string> l{{"cgroup", cgroup}};
    if (op) l["op"] = op;
    return sample_sum(text, std::string("eziotrace_") + name, l);
  };
  EXPECT_EQ(sum("syscall_bytes_total", ca.path(), "write"), part_a * kBlock);
  EXPECT_EQ(sum("syscall_calls_total", ca.path(), "write"), part_a);
  EXPECT_EQ(sum("syscall_bytes_total", cb.path(), "write"), part_b * kBlock);
  EXPECT_EQ(sum("syscall_calls_total", cb.path(), "write"), part_b);
  // Each block written once to the raw device: one page dirtied, by the cgroup that wrote it.
  EXPECT_EQ(sum("pagecache_dirtied_pages_total", ca.path(), nullptr), part_a);
  EXPECT_EQ(sum("pagecache_dirtied_pages_total", cb.path(), nullptr), part_b);
}

}  // namespace
}  // namespace ezio::test
