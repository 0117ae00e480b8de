// SPDX-License-Identifier: GPL-2.0-only
// The page-cache, dirty-throttling and overflow series of eziotraced --metrics against what is
// known of a workload on a private loop device: the pages of a cold file read twice then dropped,
// a writer held to a few MiB of dirty pages, a table too small for the node's series.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>

#include "loop_fs.h"
#include "metrics_env.h"
#include "recorded_suite.h"

namespace ezio::test {
namespace {

std::filesystem::path bdi_of(const LoopFs& disk) {
  std::ifstream in("/sys/block/" + disk.device() + "/dev");
  std::string dev;
  if (!(in >> dev)) throw std::runtime_error("no dev number for " + disk.device());
  return std::filesystem::path("/sys/class/bdi") / dev;
}

TEST(MetricsLayers, PageCacheCountsTheReadsOfAColdFileAndItsEviction) {
  LoopFs disk("ext4");
  std::string file = (disk / "data").string();
  constexpr double kPages = 2048;  // 8 MiB
  must_run(
      {"dd", "if=/dev/zero", "of=" + file, "bs=4096", "count=2048", "conv=fsync", "status=none"});
  disk.remount();  // its pages leave the cache: the first read below is cold
  TestCgroup job("ezio_metrics_pc");
  int port = free_port();
  MetricsDaemon daemon({"--metrics", std::to_string(port)});
  // Read twice (cold, then from the cache), then dropped from the cache (fadvise DONTNEED).
  for (int i = 0; i < 2; ++i) {
    expect_success(job.spawn({"dd", "if=" + file, "of=/dev/null", "bs=4096", "status=none"}));
  }
  expect_success(job.spawn({"dd", "if=" + file, "iflag=nocache", "count=0", "status=none"}));
  std::string text = scrape(port);
  std::map<std::string, std::string> on_disk{{"cgroup", job.path()}, {"device", disk.device()}};
  auto pages = [&](const char* what) {
    return sample_sum(text, std::string("eziotrace_pagecache_") + what + "_pages_total", on_disk);
  };
  // Each 4 KiB read looks one page up; the read at the end of the file looks up none.
  EXPECT_EQ(pages("accessed"), 2 * kPages);
  // Every page was brought in once, by the first read: needed then, or read ahead of it.
  EXPECT_EQ(pages("missed") + pages("readahead"), kPages);
  EXPECT_GT(pages("missed"), 0);
  EXPECT_GT(pages("readahead"), 0) << "a sequential cold read reads ahead";
  EXPECT_EQ(pages("evicted"), kPages);
  EXPECT_EQ(pages("dirtied"), 0);
}

TEST(MetricsLayers, DirtyThrottlingTimeIsCounted) {
  LoopFs disk("ext4");
  TestCgroup job("ezio_metrics_thr");
  int port = free_port();
  MetricsDaemon daemon({"--metrics", std::to_string(port)});
  // The device's dirty pages held to 4 MiB even below the global limits: a faster writer waits.
  DirtyLimit limit(bdi_of(disk), 4 << 20);
  auto t0 = std::chrono::steady_clock::now();
  expect_success(job.spawn(
      {"dd", "if=/dev/zero", "of=" + (disk / "t").string(), "bs=1M", "count=64", "status=none"}));
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::string text = scrape(port);
  std::map<std::string, std::string> of_job{{"cgroup", job.path()}};
  double pauses = sample_sum(text, "eziotrace_dirty_throttle_seconds_count", of_job);
  double seconds = sample_sum(text, "eziotrace_dirty_throttle_seconds_sum", of_job);
  std::printf("throttled: %.0f pauses, %.3f s asked, dd took %.3f s\n", pauses, seconds, wall);
  EXPECT_GT(pauses, 0);
  EXPECT_GT(seconds, 0);
  // The pauses asked, not the time slept: each is at most what dd lived.
  EXPECT_LE(seconds, wall * 1.1 + 0.2);
  // At least each page once (a large folio written back between two writes is dirtied again).
  EXPECT_GE(sample_sum(text, "eziotrace_pagecache_dirtied_pages_total", of_job), 64 * 256);
}

TEST(MetricsLayers, WhatFindsNoRoomIsCountedAsOverflow) {
  TestCgroup job("ezio_metrics_over");
  int port = free_port();
  MetricsDaemon daemon({"--metrics", std::to_string(port), "--metrics-max-series", "1"});
  expect_success(
      job.spawn({"dd", "if=/dev/zero", "of=/dev/null", "bs=512", "count=1000", "status=none"}));
  std::string text = scrape(port);
  EXPECT_EQ(sample_sum(text, "eziotrace_series_limit", {}), 1);
  EXPECT_LE(sample_sum(text, "eziotrace_series", {}), 1);
  // The node's first series took the only room (the endpoint's own socket I/O, another process):
  // each of dd's writes is in its series or in the overflow, none is lost silently.
  double counted =
      sample_sum(text, "eziotrace_syscall_calls_total", {{"cgroup", job.path()}, {"op", "write"}});
  double overflow =
      sample_sum(text, "eziotrace_overflow_events_total", {{"layer", "syscall"}, {"op", "write"}});
  EXPECT_GE(counted + overflow, 1000);
  EXPECT_GT(sample_sum(text, "eziotrace_overflow_events_total", {}), 0);
}

}  // namespace
}  // namespace ezio::test
