// SPDX-License-Identifier: GPL-2.0-only
// A real Prometheus (Debian's) scrapes eziotraced --metrics; PromQL through its HTTP API gives the
// figures of a known workload: the bytes dd wrote, the fsync it called, the block requests of
// /sys/block/<loop>/stat.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "loop_fs.h"
#include "metrics_env.h"

namespace ezio::test {
namespace {

class Prometheus {
 public:
  explicit Prometheus(int target_port) : port_(free_port()) {
    std::filesystem::path dir = scratch_dir("prometheus");
    std::ofstream(dir / "prometheus.yml")
        << "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
        << "scrape_configs:\n  - job_name: eziotraced\n    static_configs:\n"
        << "      - targets: ['127.0.0.1:" << target_port << "']\n";
    std::string prom = "/usr/bin/prometheus";
    if (!std::filesystem::exists(prom)) throw std::runtime_error("Debian's prometheus is missing");
    server_ = std::make_unique<Background>(std::vector<std::string>{
        prom, "--config.file=" + (dir / "prometheus.yml").string(),
        "--storage.tsdb.path=" + (dir / "data").string(),
        "--web.listen-address=127.0.0.1:" + std::to_string(port_), "--log.level=warn"});
    for (int i = 0; i < 300 && !ready(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (!ready()) throw std::runtime_error("prometheus did not become ready");
  }
  // The value of a PromQL query that gives one sample; NaN when it gives none.
  double query(const std::string& promql) const {
    Run r = run({"curl", "-sf", "-G", url("/api/v1/query"), "--data-urlencode", "query=" + promql});
    if (r.status != 0) return std::nan("");
    auto j = nlohmann::json::parse(r.out);
    const auto& result = j["data"]["result"];
    if (result.empty()) return std::nan("");
    return std::stod(result[0]["value"][1].get<std::string>());
  }
  // Polls the query (new scrapes come every second) until it gives `want` or 30 s have passed;
  // returns its last value.
  double wait_for(const std::string& promql, double want) const {
    double v = std::nan("");
    for (int i = 0; i < 60; ++i) {
      v = query(promql);
      if (v == want) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    return v;
  }

 private:
  std::string url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }
  bool ready() const { return run({"curl", "-sf", url("/-/ready")}).status == 0; }
  int port_;
  std::unique_ptr<Background> server_;
};

TEST(Prometheus, PromQlGivesTheFiguresOfAKnownWorkload) {
  LoopFs disk("raw");
  // Named as systemd names a transient scope: its series carry unit and slice.
  TestCgroup job(TestCgroup::SystemdScope{"ezio_test.slice", "ezio-metrics-prom"});
  int port = free_port();
  MetricsDaemon daemon({"--metrics", std::to_string(port)});
  Prometheus prometheus(port);
  DiskStat before = disk_stat(disk.device());
  expect_success(job.spawn({"dd", "if=/dev/zero", "of=/dev/" + disk.device(), "bs=4096",
                            "count=1000", "conv=fsync", "status=none"}));
  DiskStat after = disk_stat(disk.device());
  std::string sel = "cgroup=\"" + job.path() + "\"";
  EXPECT_EQ(
      prometheus.wait_for("sum(eziotrace_syscall_bytes_total{" + sel + ",op=\"write\"})", 4096000),
      4096000);
  EXPECT_EQ(prometheus.wait_for("sum(eziotrace_syscall_calls_total{" + sel + ",op=\"fsync\"})", 1),
            1);
  double requests = after.requests() - before.requests();
  EXPECT_EQ(prometheus.wait_for(
                "sum(eziotrace_block_requests_total{" + sel + ",device=\"" + disk.device() + "\"})",
                requests),
            requests);
  // The recording rules of docs/metrics.md keep the job's labels: its bytes by unit and slice.
  std::string unit = job.path().substr(job.path().rfind('/') + 1);
  EXPECT_EQ(prometheus.wait_for("sum by (cgroup, job_id, unit, slice) (eziotrace_block_bytes_total{"
                                "unit=\"" +
                                    unit + "\",slice=\"ezio_test.slice\",op=\"write\"})",
                                4096000),
            4096000);
}

TEST(Prometheus, PromQlGivesTheVfsBytesPerFileSystemAndMount) {
  LoopFs disk("xfs");
  TestCgroup job("ezio_metrics_prom_vfs");
  int port = free_port();
  MetricsDaemon daemon({"--metrics", std::to_string(port)});
  Prometheus prometheus(port);
  expect_success(job.spawn({"dd", "if=/dev/zero", "of=" + (disk / "f").string(), "bs=4096",
                            "count=1000", "conv=fsync", "status=none"}));
  std::string sel =
      "cgroup=\"" + job.path() + "\",fstype=\"xfs\",mount=\"" + disk.mount_point().string() + "\"";
  EXPECT_EQ(
      prometheus.wait_for("sum(eziotrace_vfs_bytes_total{" + sel + ",op=\"write\"})", 4096000),
      4096000);
  EXPECT_EQ(prometheus.wait_for("sum(eziotrace_vfs_calls_total{" + sel + ",op=\"fsync\"})", 1), 1);
  EXPECT_EQ(prometheus.wait_for(
                "sum by (fstype) (eziotrace_fs_bytes_total{" + sel + ",op=\"write\"})", 4096000),
            4096000);
}

}  // namespace
}  // namespace ezio::test
