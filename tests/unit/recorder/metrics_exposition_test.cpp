// SPDX-License-Identifier: GPL-2.0-only
// The metrics' text without the kernel: the exposition formats, the listen address, Slurm's job
// ids, cgroup ids named by walking a directory tree.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "common/error.h"
#include "recorder/metrics/cgroup_names.h"
#include "recorder/metrics/exposition.h"
#include "recorder/metrics/http_server.h"
#include "run.h"

namespace ezio::recorder::metrics {
namespace {

NamedSeries series(uint16_t op, uint64_t count, std::string cgroup, std::string device = {}) {
  NamedSeries n;
  n.s.key.cgroup = 42;
  n.s.key.op = op;
  n.s.value.count = count;
  n.s.value.bytes = count * 10;
  n.s.value.hist[0] = 1;
  n.s.value.hist[3] = count - 1;
  n.s.value.sum_ns = 5000;
  n.cgroup = std::move(cgroup);
  n.device = std::move(device);
  return n;
}

TEST(MetricsExposition, OpenMetricsAndTextFormat) {
  Snapshot s;
  s.max_series = 100;
  s.series.push_back(series(EZIO_M_SC_WRITE, 4, "/a\"b"));
  s.series.back().job_id = "17";
  s.series.push_back(series(EZIO_M_BLK_FLUSH, 2, "", "loop3"));
  std::string om = expose(s, Format::kOpenMetrics);
  EXPECT_TRUE(om.ends_with("# EOF\n"));
  EXPECT_NE(om.find("# TYPE eziotrace_syscall_calls counter\n"), std::string::npos);
  EXPECT_NE(
      om.find("eziotrace_syscall_calls_total{cgroup=\"/a\\\"b\",job_id=\"17\",op=\"write\"} 4\n"),
      std::string::npos)
      << om;
  EXPECT_NE(
      om.find("eziotrace_syscall_bytes_total{cgroup=\"/a\\\"b\",job_id=\"17\",op=\"write\"} 40\n"),
      std::string::npos);
  // Cumulative buckets: 1 below 1.024 µs, 4 from the fourth bucket on, the +Inf one the count.
  EXPECT_NE(om.find("le=\"1.024e-06\"} 1\n"), std::string::npos) << om;
  EXPECT_NE(om.find("le=\"4.096e-06\"} 1\n"), std::string::npos);
  EXPECT_NE(om.find("le=\"8.192e-06\"} 4\n"), std::string::npos);
  EXPECT_NE(om.find("op=\"write\",le=\"+Inf\"} 4\n"), std::string::npos);
  EXPECT_NE(om.find("eziotrace_syscall_latency_seconds_sum{cgroup=\"/a\\\"b\",job_id=\"17\","
                    "op=\"write\"} 0.000005000\n"),
            std::string::npos);
  // What is no job's carries no cgroup label.
  EXPECT_NE(om.find("eziotrace_block_requests_total{device=\"loop3\",op=\"flush\"} 2\n"),
            std::string::npos);
  std::string text = expose(s, Format::kPrometheus);
  EXPECT_EQ(text.find("# EOF"), std::string::npos);
  EXPECT_NE(text.find("# TYPE eziotrace_syscall_calls_total counter\n"), std::string::npos);
  EXPECT_NE(text.find("eziotrace_series_limit 100\n"), std::string::npos);
  s.mounts = 3;
  s.max_mounts = 8;
  s.ended_mounts = 5;
  om = expose(s, Format::kOpenMetrics);
  EXPECT_NE(om.find("\neziotrace_mounts 3\n"), std::string::npos) << om;
  EXPECT_NE(om.find("\neziotrace_mounts_limit 8\n"), std::string::npos);
  EXPECT_NE(om.find("# TYPE eziotrace_ended_mounts counter\neziotrace_ended_mounts_total 5\n"),
            std::string::npos);
}

TEST(MetricsExposition, ListenAddress) {
  EXPECT_EQ(parse_listen("9464").addr, "127.0.0.1");
  EXPECT_EQ(parse_listen("9464").port, 9464);
  EXPECT_EQ(parse_listen("0.0.0.0:80").addr, "0.0.0.0");
  EXPECT_EQ(parse_listen("0.0.0.0:80").port, 80);
  for (const char* bad : {"", "x", "70000", "host:1", "1.2.3.4:", "1.2.3.4:9x", ":"}) {
    EXPECT_THROW(parse_listen(bad), Error) << bad;
  }
}

TEST(MetricsExposition, SlurmJobIds) {
  EXPECT_EQ(slurm_job_id("/system.slice/slurmstepd.scope/job_123/step_0/user/task_0"), "123");
  EXPECT_EQ(slurm_job_id("/slurm/uid_1000/job_77"), "77");
  EXPECT_EQ(slurm_job_id("/user.slice/user-1000.slice"), std::nullopt);
  EXPECT_EQ(slurm_job_id("/job_12x"), std::nullopt);
}

TEST(MetricsExposition, CgroupIdsAreNamedByTheirDirectories) {
  auto root = ezio::test::scratch_dir("cgroup_names");
  std::filesystem::create_directories(root / "a" / "b");
  struct stat st {};
  ASSERT_EQ(stat((root / "a" / "b").c_str(), &st), 0);
  CgroupNames names(root);
  EXPECT_EQ(names.path_of(st.st_ino), "/a/b");
  std::filesystem::remove(root / "a" / "b");
  names.refresh();
  EXPECT_EQ(names.path_of(st.st_ino), std::nullopt) << "ended";
  EXPECT_EQ(names.last_path_of(st.st_ino), "/a/b");
  EXPECT_EQ(names.path_of(1234567890123), std::nullopt);
}

}  // namespace
}  // namespace ezio::recorder::metrics
