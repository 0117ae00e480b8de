// SPDX-License-Identifier: GPL-2.0-only
// `eziotrace top` without a service: eziotraced's exposition parsed into jobs, rates and p99s
// between two samples, the order, the table; and the new series' exposition (user, device, queue
// time, page cache, throttling).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "recorder/metrics/exposition.h"
#include "recorder/metrics/top_jobs.h"

namespace ezio::recorder::metrics {
namespace {

// Two jobs: /a wrote 1000 then 3000 bytes, its write latencies all under 1.024 µs then 99 more
// between 2.048 and 4.096 µs, as many FS writes on ext4 all under 8.192 µs; /b read 10 then 10
// bytes (idle); no one's block requests.
std::string exposition(double a_bytes, double fast, double slow) {
  return fmt::format(
      "# TYPE eziotrace_syscall_bytes_total counter\n"
      "eziotrace_syscall_bytes_total{{cgroup=\"/a\",user=\"root\",op=\"write\"}} {}\n"
      "eziotrace_syscall_bytes_total{{cgroup=\"/b\",job_id=\"7\",user=\"x\\\"y\",op=\"read\"}} 10\n"
      "eziotrace_syscall_calls_total{{cgroup=\"/a\",user=\"root\",op=\"fsync\"}} 2\n"
      "eziotrace_syscall_latency_seconds_bucket{{cgroup=\"/a\",user=\"root\",op=\"write\","
      "le=\"1.024e-06\"}} {}\n"
      "eziotrace_syscall_latency_seconds_bucket{{cgroup=\"/a\",user=\"root\",op=\"write\","
      "le=\"4.096e-06\"}} {}\n"
      "eziotrace_syscall_latency_seconds_bucket{{cgroup=\"/a\",user=\"root\",op=\"write\","
      "le=\"+Inf\"}} {}\n"
      "eziotrace_fs_calls_total{{cgroup=\"/a\",user=\"root\",fstype=\"ext4\",device=\"vda\","
      "op=\"write\"}} {}\n"
      "eziotrace_fs_latency_seconds_bucket{{cgroup=\"/a\",user=\"root\",fstype=\"ext4\","
      "device=\"vda\",op=\"write\",le=\"8.192e-06\"}} {}\n"
      "eziotrace_fs_latency_seconds_bucket{{cgroup=\"/a\",user=\"root\",fstype=\"ext4\","
      "device=\"vda\",op=\"write\",le=\"+Inf\"}} {}\n"
      "eziotrace_block_requests_total{{device=\"vda\",op=\"write\"}} 5\n"
      "eziotrace_pagecache_missed_pages_total{{cgroup=\"/a\",user=\"root\",device=\"vda\"}} 3\n"
      "garbage line {{\n",
      a_bytes, fast, fast + slow, fast + slow, fast + slow, fast + slow, fast + slow);
}

TEST(MetricsTop, ParsesJobsAndTheirRates) {
  NodeSample before = parse_exposition(exposition(1000, 10, 0), 100);
  NodeSample now = parse_exposition(exposition(3000, 11, 99), 102);
  ASSERT_EQ(now.jobs.size(), 2u) << "no one's series are no job";
  const JobTotals& a = now.jobs.at("/a");
  EXPECT_EQ(a.counters.at("write_bytes"), 3000);
  EXPECT_EQ(a.counters.at("fsyncs"), 2);
  EXPECT_EQ(a.counters.at("missed_pages"), 3);
  EXPECT_EQ(now.jobs.at("/b").job_id, "7");
  EXPECT_EQ(now.jobs.at("/b").users, std::set<std::string>{"x\"y"});
  std::vector<JobView> v = job_views(before, now, "io");
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].now->cgroup, "/a") << "the busier first";
  EXPECT_EQ(v[0].per_second.at("write_bytes"), 1000);
  // 100 writes in the interval, 99 of them in the 4.096 µs bucket: p99 is that bucket's bound.
  EXPECT_DOUBLE_EQ(*v[0].p99_seconds.at("syscall_write"), 4.096e-06);
  EXPECT_EQ(v[1].per_second.at("read_bytes"), 0);
  EXPECT_EQ(job_views(before, now, "cgroup")[0].now->cgroup, "/a");
  EXPECT_EQ(job_views(before, now, "read")[0].now->cgroup, "/a") << "ties by name";
  // Nothing measured meanwhile: no p99. A smaller total (eziotraced restarted) counts from 0.
  EXPECT_FALSE(job_views(now, now, "io")[0].p99_seconds.at("syscall_write"));
  NodeSample restarted = parse_exposition(exposition(1000, 1, 0), 104);
  EXPECT_EQ(job_views(now, restarted, "io")[0].per_second.at("write_bytes"), 500);
}

TEST(MetricsTop, TableAndJson) {
  NodeSample before = parse_exposition(exposition(0, 0, 0), 0);
  NodeSample now = parse_exposition(exposition(3 << 20, 1, 99), 1);
  std::vector<JobView> v = job_views(before, now, "io");
  std::string table = format_table(v, "title", 1);
  EXPECT_TRUE(table.starts_with("title\nJOB ")) << table;
  // 100 FS writes in the second, all under 8.192 µs: FSOPS/s and P99FS.
  EXPECT_NE(table.find("\n/a                       root           0    3.0M       0      0     100 "
                       "   8us       0       0       0       0      0     4us       -     0\n"),
            std::string::npos)
      << table;
  EXPECT_EQ(table.find("slurm:7"), std::string::npos) << "--limit 1";
  EXPECT_NE(format_table(v, "t", 0).find("\nslurm:7 "), std::string::npos);
  nlohmann::json j = frame_json(v, "src", 1, 5);
  EXPECT_EQ(j["jobs"][0]["totals"]["write_bytes"], 3 << 20);
  EXPECT_EQ(j["jobs"][1]["job_id"], "7");
  EXPECT_NE(format_table({}, "t", 0).find("(no job has done I/O"), std::string::npos);
}

// Three devices: vda with /a's block writes and FS writes (timed), no one's journal writes and
// /b's VFS reads; loop1 with /a's page-cache misses only; tmpfs's anonymous 0:21, mounted twice,
// with /b's VFS writes.
std::string device_exposition(double a_requests, double journal_requests) {
  return fmt::format(
      "eziotrace_syscall_bytes_total{{cgroup=\"/a\",user=\"root\",op=\"write\"}} 4096\n"
      "eziotrace_block_requests_total{{cgroup=\"/a\",user=\"root\",device=\"vda\","
      "op=\"write\"}} {}\n"
      "eziotrace_block_bytes_total{{cgroup=\"/a\",user=\"root\",device=\"vda\",op=\"write\"}} "
      "{}\n"
      "eziotrace_block_requests_total{{device=\"vda\",op=\"write\"}} {}\n"
      "eziotrace_block_service_seconds_bucket{{device=\"vda\",op=\"write\",le=\"0.001024\"}} "
      "{}\n"
      "eziotrace_block_service_seconds_bucket{{device=\"vda\",op=\"write\",le=\"+Inf\"}} {}\n"
      "eziotrace_vfs_bytes_total{{cgroup=\"/b\",user=\"bob\",device=\"vda\",fstype=\"ext4\","
      "mount=\"/\",op=\"read\"}} 8192\n"
      "eziotrace_pagecache_missed_pages_total{{cgroup=\"/a\",user=\"root\",device=\"loop1\"}} "
      "3\n"
      "eziotrace_fs_calls_total{{cgroup=\"/a\",user=\"root\",device=\"vda\",fstype=\"ext4\","
      "mount=\"/\",op=\"write\"}} {}\n"
      "eziotrace_fs_latency_seconds_bucket{{cgroup=\"/a\",user=\"root\",device=\"vda\","
      "fstype=\"ext4\",mount=\"/\",op=\"write\",le=\"0.000008\"}} {}\n"
      "eziotrace_fs_latency_seconds_bucket{{cgroup=\"/a\",user=\"root\",device=\"vda\","
      "fstype=\"ext4\",mount=\"/\",op=\"write\",le=\"+Inf\"}} {}\n"
      "eziotrace_vfs_bytes_total{{cgroup=\"/b\",user=\"bob\",device=\"0:21\",fstype=\"tmpfs\","
      "mount=\"/run/bind\",op=\"write\"}} 10\n"
      "eziotrace_vfs_bytes_total{{cgroup=\"/b\",user=\"bob\",device=\"0:21\",fstype=\"tmpfs\","
      "mount=\"/tmp\",op=\"write\"}} 20\n",
      a_requests, a_requests * 4096, journal_requests, journal_requests, journal_requests,
      a_requests, a_requests, a_requests);
}

TEST(MetricsTop, ByDevice) {
  NodeSample before = parse_exposition(device_exposition(10, 2), 0, TopBy::device);
  NodeSample now = parse_exposition(device_exposition(40, 12), 2, TopBy::device);
  ASSERT_EQ(now.jobs.size(), 3u) << "the system calls have no device";
  const JobTotals& vda = now.jobs.at("vda");
  EXPECT_EQ(vda.device, "vda");
  EXPECT_EQ(vda.cgroups, (std::set<std::string>{"/a", "/b"}));
  EXPECT_EQ(vda.users, (std::set<std::string>{"bob", "root"}));
  EXPECT_EQ(vda.counters.at("block_requests"), 52) << "no one's requests count on the device";
  EXPECT_EQ(vda.counters.at("unattributed_requests"), 12);
  EXPECT_EQ(vda.counters.at("block_write_bytes"), 40 * 4096);
  EXPECT_EQ(vda.counters.at("vfs_read_bytes"), 8192);
  EXPECT_EQ(vda.counters.at("fs_calls"), 40);
  EXPECT_EQ(now.jobs.at("loop1").counters.at("missed_pages"), 3);
  const JobTotals& tmpfs = now.jobs.at("0:21");
  EXPECT_EQ(device_display_name(tmpfs), "tmpfs:/tmp") << "of its two mounts, the shortest";
  EXPECT_EQ(device_display_name(vda), "vda") << "a block device keeps its name";
  EXPECT_EQ(tmpfs.counters.at("vfs_write_bytes"), 30);
  std::vector<JobView> v = job_views(before, now, "io");
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].now->device, "vda");
  EXPECT_EQ(v[0].per_second.at("block_requests"), 20);
  EXPECT_EQ(job_views(before, now, "device")[0].now->device, "loop1");
  std::string table = format_device_table(v, "title", 0);
  EXPECT_TRUE(table.starts_with("title\nDEVICE ")) << table;
  // 40 requests a second, 10 of no one's (25 %), all within 1.024 ms; 15 FS writes a second,
  // all within 8 µs.
  EXPECT_NE(table.find("\nvda                     2       0       0      15    8us       0       0"
                       "       0   60.0K     20     25   1.0ms       -\n"),
            std::string::npos)
      << table;
  nlohmann::json j = frame_json(v, "src", 2, 5);
  EXPECT_EQ(j["jobs"][0]["device"], "vda");
  EXPECT_EQ(j["jobs"][0]["jobs"], nlohmann::json::array({"/a", "/b"}));
  EXPECT_EQ(j["jobs"][0]["fstype"], "ext4");
  EXPECT_NE(table.find("\ntmpfs:/tmp              1 "), std::string::npos) << table;
  EXPECT_FALSE(j["jobs"][0].contains("cgroup"));
  EXPECT_NE(format_device_table({}, "t", 0).find("(no device"), std::string::npos);
}

// A file system with no block device is named by the kernel `major:minor`: a person reads its
// type and mount point instead (the shortest: the others are bind mounts in it).
TEST(MetricsTop, ADeviceWithoutABlockDeviceIsNamedByItsTypeAndMount) {
  std::string text =
      "eziotrace_vfs_bytes_total{cgroup=\"/a\",user=\"root\",device=\"0:21\",fstype=\"proc\","
      "mount=\"/proc\",op=\"read\"} 100\n"
      "eziotrace_vfs_bytes_total{cgroup=\"/a\",user=\"root\",device=\"0:45\",fstype=\"tmpfs\","
      "mount=\"/run/user/1000/x\",op=\"write\"} 10\n"
      "eziotrace_vfs_bytes_total{cgroup=\"/b\",user=\"root\",device=\"0:45\",fstype=\"tmpfs\","
      "mount=\"/tmp\",op=\"write\"} 20\n"
      "eziotrace_vfs_bytes_total{cgroup=\"/a\",user=\"root\",device=\"0:46\",fstype=\"tmpfs\","
      "mount=\"(other)\",op=\"write\"} 30\n"
      "eziotrace_vfs_bytes_total{cgroup=\"/a\",user=\"root\",device=\"0:46\",fstype=\"tmpfs\","
      "mount=\"(id 7)\",op=\"write\"} 5\n"
      "eziotrace_vfs_bytes_total{cgroup=\"/a\",user=\"root\",device=\"0:30\",fstype=\"cgroup2\","
      "mount=\"/sys/fs/cgroup/unified\",op=\"read\"} 40\n"
      "eziotrace_vfs_bytes_total{cgroup=\"/a\",user=\"root\",device=\"vda\",fstype=\"ext4\","
      "mount=\"/\",op=\"read\"} 8192\n";
  NodeSample before = parse_exposition(text, 0, TopBy::device);
  NodeSample now = parse_exposition(text, 1, TopBy::device);
  EXPECT_EQ(device_display_name(now.jobs.at("0:21")), "proc:/proc");
  EXPECT_EQ(device_display_name(now.jobs.at("0:45")), "tmpfs:/tmp");
  EXPECT_EQ(device_display_name(now.jobs.at("0:46")), "tmpfs:0:46") << "no mount known by name";
  EXPECT_EQ(device_display_name(now.jobs.at("vda")), "vda") << "a block device keeps its name";
  std::vector<JobView> v = job_views(before, now, "device");
  std::string table = format_device_table(v, "title", 0);
  EXPECT_NE(table.find("\nproc:/proc "), std::string::npos) << table;
  EXPECT_EQ(table.find("\n0:21 "), std::string::npos) << table;
  EXPECT_NE(table.find("\ncgroup2:…oup/unified "), std::string::npos)
      << "cut to 20 columns, its type and its end kept: " << table;
  nlohmann::json j = frame_json(v, "src", 1, 5);
  for (const auto& d : j["jobs"]) {
    if (d["device"] == "0:21") {
      EXPECT_EQ(d["name"], "proc:/proc") << "the label as Prometheus has it stays beside";
      EXPECT_EQ(d["fstype"], "proc");
    }
    if (d["device"] == "0:45") {
      EXPECT_EQ(d["mounts"], nlohmann::json::array({"/run/user/1000/x", "/tmp"}));
    }
  }
}

TEST(MetricsTop, NewSeriesCarryUserDeviceAndKind) {
  Snapshot s;
  NamedSeries q;
  q.s.key.cgroup = 5;
  q.s.key.dev = 1;
  q.s.key.op = EZIO_M_BLK_WRITE;
  q.s.key.kind = EZIO_M_KIND_QUEUE;
  q.s.value.count = 2;
  q.s.value.hist[1] = 2;
  q.cgroup = "/j";
  q.user = "root";
  q.device = "loop1";
  s.series.push_back(q);
  NamedSeries pc = q;
  pc.s.key.op = EZIO_M_PC_EVICTED;
  pc.s.key.kind = EZIO_M_KIND_MAIN;
  pc.s.value.count = 7;
  s.series.push_back(pc);
  std::string text = expose(s, Format::kPrometheus);
  EXPECT_NE(text.find("eziotrace_block_queue_seconds_count{cgroup=\"/j\",user=\"root\","
                      "device=\"loop1\",op=\"write\"} 2\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("eziotrace_block_requests_total{cgroup"), std::string::npos)
      << "a queue series is no request count";
  EXPECT_NE(text.find("eziotrace_pagecache_evicted_pages_total{cgroup=\"/j\",user=\"root\","
                      "device=\"loop1\",op=\"evicted\"} 7\n"),
            std::string::npos);
  EXPECT_NE(text.find("eziotrace_overflow_events_total{layer=\"pagecache\",op=\"throttled\"} 0"),
            std::string::npos);
}

}  // namespace
}  // namespace ezio::recorder::metrics
