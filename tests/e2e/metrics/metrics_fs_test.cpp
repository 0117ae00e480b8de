// SPDX-License-Identifier: GPL-2.0-only
// The VFS and FS layers' series of eziotraced --metrics, per file-system type and mount, against
// what two known jobs did at the same time: each one's dd to a file of its own private loop device
// (one ext4, one xfs), in a cgroup of its own; each job is charged only its own calls, on its own
// mount. Then the mounts' bound: what finds no room is counted under mount "(other)" and as
// overflow, not dropped; a mount unmounted is reported once more, then gives its slot back.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <vector>

#include "loop_fs.h"
#include "metrics_env.h"

namespace ezio::test {
namespace {

struct Job {
  const LoopFs& disk;
  const TestCgroup& cgroup;
  int pages;
};

pid_t start_dd(const Job& j) {
  return j.cgroup.spawn({"dd", "if=/dev/zero", "of=" + (j.disk / "data").string(), "bs=4096",
                         "count=" + std::to_string(j.pages), "conv=fsync", "status=none"});
}

TEST(MetricsFs, VfsAndFsSeriesChargeEachJobItsOwnCallsOnItsOwnMount) {
  LoopFs ext4("ext4"), xfs("xfs");
  TestCgroup a("ezio_metrics_fs_a"), b("ezio_metrics_fs_b");
  int port = free_port();
  // Every call timed: the histograms' counts are exact too (the sampling is tested below).
  MetricsDaemon daemon({"--metrics", std::to_string(port), "--metrics-latency-every", "1"});
  const Job jobs[] = {{ext4, a, 1000}, {xfs, b, 500}};
  pid_t pa = start_dd(jobs[0]), pb = start_dd(jobs[1]);
  expect_success(pa);
  expect_success(pb);
  std::string text = scrape(port);
  const char* fstypes[] = {"ext4", "xfs"};
  for (int i = 0; i < 2; ++i) {
    const Job& j = jobs[i];
    const Job& other = jobs[1 - i];
    SCOPED_TRACE(fstypes[i]);
    auto on = [&](const Job& where, const char* op) {
      return std::map<std::string, std::string>{{"cgroup", j.cgroup.path()},
                                                {"mount", where.disk.mount_point().string()},
                                                {"fstype", fstypes[&where == &jobs[0] ? 0 : 1]},
                                                {"op", op}};
    };
    double bytes = 4096.0 * j.pages;
    // VFS: every write call of dd on its file, and its fsync, on its mount.
    EXPECT_EQ(sample_sum(text, "eziotrace_vfs_calls_total", on(j, "write")), j.pages);
    EXPECT_EQ(sample_sum(text, "eziotrace_vfs_bytes_total", on(j, "write")), bytes);
    EXPECT_EQ(sample_sum(text, "eziotrace_vfs_calls_total", on(j, "fsync")), 1);
    EXPECT_EQ(sample_sum(text, "eziotrace_vfs_latency_seconds_count", on(j, "write")), j.pages);
    EXPECT_EQ(sample_sum(text, "eziotrace_vfs_calls_total", on(j, "read")), 0);
    // FS: the file system's own view (ext4: each page written; xfs: each write call).
    EXPECT_EQ(sample_sum(text, "eziotrace_fs_calls_total", on(j, "write")), j.pages);
    EXPECT_EQ(sample_sum(text, "eziotrace_fs_bytes_total", on(j, "write")), bytes);
    EXPECT_EQ(sample_sum(text, "eziotrace_fs_calls_total", on(j, "fsync")), 1);
    // Nothing of this job on the other job's mount, nor of the other job on this one.
    std::map<std::string, std::string> mine{{"cgroup", j.cgroup.path()},
                                            {"mount", other.disk.mount_point().string()}};
    EXPECT_EQ(sample_sum(text, "eziotrace_vfs_calls_total", mine), 0);
    EXPECT_EQ(sample_sum(text, "eziotrace_fs_calls_total", mine), 0);
  }
  // ext4's fsync is timed (its enter and exit tracepoints), xfs's is a single point.
  EXPECT_EQ(sample_sum(text, "eziotrace_fs_latency_seconds_count",
                       {{"cgroup", a.path()}, {"fstype", "ext4"}, {"op", "fsync"}}),
            1);
  EXPECT_EQ(sample_sum(text, "eziotrace_overflow_events_total", {{"op", "mount"}}), 0);
}

// The default: one call in 16 per CPU timed. Counts and bytes stay exact, the histograms count
// only the calls timed (a share of them, never all), the sync calls are all timed, and the
// exposition says the sampling.
TEST(MetricsFs, SampledLatencyKeepsCountsExactAndSaysItsSampling) {
  LoopFs ext4("ext4");
  TestCgroup a("ezio_metrics_fss_a");
  int port = free_port();
  MetricsDaemon daemon({"--metrics", std::to_string(port)});
  const Job job{ext4, a, 2000};
  expect_success(start_dd(job));
  std::string text = scrape(port);
  std::map<std::string, std::string> writes{{"cgroup", a.path()}, {"op", "write"}};
  EXPECT_EQ(sample_sum(text, "eziotrace_syscall_calls_total", writes), job.pages);
  EXPECT_EQ(sample_sum(text, "eziotrace_syscall_bytes_total", writes), 4096.0 * job.pages);
  EXPECT_EQ(sample_sum(text, "eziotrace_vfs_calls_total", writes), job.pages);
  for (const char* h :
       {"eziotrace_syscall_latency_seconds_count", "eziotrace_vfs_latency_seconds_count"}) {
    SCOPED_TRACE(h);
    double timed = sample_sum(text, h, writes);
    EXPECT_GT(timed, 0);
    EXPECT_LT(timed * 4, job.pages);
  }
  EXPECT_EQ(sample_sum(text, "eziotrace_syscall_latency_seconds_count",
                       {{"cgroup", a.path()}, {"op", "fsync"}}),
            1);
  EXPECT_NE(text.find("\neziotrace_latency_sample_every 16\n"), std::string::npos);
}

TEST(MetricsFs, MountsBeyondTheBoundAreCountedAsOtherAndAsOverflow) {
  LoopFs ext4("ext4"), xfs("xfs");
  TestCgroup a("ezio_metrics_fsb_a"), b("ezio_metrics_fsb_b");
  int port = free_port();
  MetricsDaemon daemon({"--metrics", std::to_string(port), "--metrics-max-mounts", "1"});
  const Job jobs[] = {{ext4, a, 300}, {xfs, b, 200}};
  expect_success(start_dd(jobs[0]));
  expect_success(start_dd(jobs[1]));
  std::string text = scrape(port);
  double other = 0;
  for (const Job& j : jobs) {
    std::map<std::string, std::string> calls{{"cgroup", j.cgroup.path()}, {"op", "write"}};
    // Every call is counted, on its mount or under "(other)".
    EXPECT_EQ(sample_sum(text, "eziotrace_vfs_calls_total", calls), j.pages);
    calls["mount"] = "(other)";
    other += sample_sum(text, "eziotrace_vfs_calls_total", calls);
  }
  // One mount of the node at most has room: one of the two at least is "(other)".
  EXPECT_GE(other, 200);
  EXPECT_GE(
      sample_sum(text, "eziotrace_overflow_events_total", {{"layer", "vfs"}, {"op", "mount"}}),
      other);
}

// A tmpfs mounted for the test, unmounted when asked or at the end.
class Tmpfs {
 public:
  explicit Tmpfs(std::string point) : point_(std::move(point)) {
    std::filesystem::create_directory(point_);
    must_run({"mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", point_});
  }
  ~Tmpfs() {
    if (mounted_) run({"umount", "-l", point_});
  }
  void unmount() {
    must_run({"umount", point_});
    mounted_ = false;
  }
  const std::string& point() const { return point_; }

 private:
  std::string point_;
  bool mounted_ = true;
};

// Mounts used then unmounted one after the other, more of them than slots: each cycle's calls are
// on its own mount, reported once more after its unmount, then gone; none finds the table full.
// The kernel gives an unmounted mount's id to the next mount: the first cycles keep a spare tmpfs
// on that id so that each of them has an id of its own (without their slots freed they would
// fill the table), the last ones take the id of the one before (without its series dropped they
// would be counted on with the one before's counts).
TEST(MetricsFs, UnmountedMountsGiveTheirSlotBack) {
  constexpr int kSlots = 12, kDistinct = 14, kCycles = 16;
  TestCgroup job("ezio_metrics_fsm");
  int port = free_port();
  MetricsDaemon daemon(
      {"--metrics", std::to_string(port), "--metrics-max-mounts", std::to_string(kSlots)});
  std::filesystem::path dir = scratch_dir("mount_cycles");
  std::string start = scrape(port);
  double ended_before = sample_sum(start, "eziotrace_ended_mounts_total", {});
  // The node's other mounts in use hold slots too (4 on this host).
  ASSERT_LE(sample_sum(start, "eziotrace_mounts", {}), kSlots / 2)
      << "the node's other mounts take half the mount table: cannot test its slots being freed";
  std::vector<std::unique_ptr<Tmpfs>> spares;  // no I/O on them: no slot
  for (int i = 0; i < kCycles; ++i) {
    Tmpfs fs((dir / ("m" + std::to_string(i))).string());
    const std::string& point = fs.point();
    ASSERT_LT(sample_sum(scrape(port), "eziotrace_mounts", {}), kSlots)
        << "cycle " << i << ": the mount table is full, the slots of the cycles before not freed";
    expect_success(job.spawn(
        {"dd", "if=/dev/zero", "of=" + point + "/data", "bs=4096", "count=100", "status=none"}));
    std::map<std::string, std::string> ours{
        {"cgroup", job.path()}, {"mount", point}, {"fstype", "tmpfs"}, {"op", "write"}};
    EXPECT_EQ(sample_sum(scrape(port), "eziotrace_vfs_calls_total", ours), 100) << "cycle " << i;
    fs.unmount();
    if (i < kDistinct) {
      spares.push_back(std::make_unique<Tmpfs>((dir / ("spare" + std::to_string(i))).string()));
    }
    // Reported once more under its mount point, then gone with its slot.
    std::string text = scrape(port);
    EXPECT_EQ(sample_sum(text, "eziotrace_vfs_calls_total", ours), 100) << "cycle " << i;
    EXPECT_GE(sample_sum(text, "eziotrace_ended_mounts_total", {}), ended_before + i + 1);
    text = scrape(port);
    EXPECT_EQ(text.find("mount=\"" + point + "\""), std::string::npos) << "cycle " << i;
  }
  std::string text = scrape(port);
  EXPECT_EQ(
      sample_sum(text, "eziotrace_vfs_calls_total", {{"cgroup", job.path()}, {"mount", "(other)"}}),
      0)
      << "a cycle found no slot";
  EXPECT_EQ(sample_sum(text, "eziotrace_mounts_limit", {}), kSlots);
}

}  // namespace
}  // namespace ezio::test
