// SPDX-License-Identifier: GPL-2.0-only
// eziotraced --metrics for real: two jobs in two cgroups, each charged only its own I/O, against
// exact counters (what dd was told to write, the fsyncs it made, /sys/block/<loop>/stat); an
// ended cgroup reported once more then dropped; the endpoint under garbage and slow clients; no
// program attached without --metrics.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>

#include "loop_fs.h"
#include "metrics_env.h"

namespace ezio::test {
namespace {

std::string metric(const char* name) { return std::string("eziotrace_") + name; }

// An open file, closed at the end of the scope.
struct UniqueFdHolder {
  explicit UniqueFdHolder(const std::string& path) : fd(open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
    if (fd < 0) throw std::runtime_error("cannot open " + path);
  }
  ~UniqueFdHolder() { close(fd); }
  int fd;
};

TEST(Metrics, TwoCgroupsAreEachChargedOnlyTheirOwnIo) {
  LoopFs a("raw"), b("raw");
  TestCgroup ca("ezio_metrics_a"), cb("ezio_metrics_b");
  int port = free_port();
  MetricsDaemon daemon({"--metrics", std::to_string(port)});
  // Held open, so that dd's close (not the last one) does not write B's pages back itself.
  UniqueFdHolder hold_b("/dev/" + b.device());
  DiskStat a0 = disk_stat(a.device()), b0 = disk_stat(b.device());
  // A: three dd, each writing 8 MiB through the page cache and calling fsync once (in its own
  // context: the writeback is submitted by dd). B: 12 000 KiB left dirty, written back when the
  // test (another cgroup) syncs: charged to B through the pages' dirtier.
  pid_t pa = ca.spawn({"sh", "-c",
                       "for i in 0 1 2; do dd if=/dev/zero of=/dev/" + a.device() +
                           " bs=4096 count=2048 seek=$((i*2048)) conv=fsync status=none || exit 1; "
                           "done"});
  // B runs as nobody (its device opened to it for the test): its series carry its user.
  must_run({"chmod", "0666", "/dev/" + b.device()});
  pid_t pb =
      cb.spawn({"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--", "dd",
                "if=/dev/zero", "of=/dev/" + b.device(), "bs=4096", "count=3000", "status=none"});
  expect_success(pa);
  expect_success(pb);
  must_run({"chmod", "0660", "/dev/" + b.device()});
  must_run({"sync"});
  DiskStat a1 = disk_stat(a.device()), b1 = disk_stat(b.device());
  std::string text = scrape(port);
  auto sum = [&](const char* name, std::map<std::string, std::string> l) {
    return sample_sum(text, metric(name), l);
  };

  EXPECT_EQ(sum("syscall_bytes_total", {{"cgroup", ca.path()}, {"op", "write"}}),
            3 * 2048 * 4096.0);
  EXPECT_EQ(sum("syscall_calls_total", {{"cgroup", ca.path()}, {"op", "fsync"}}), 3);
  EXPECT_EQ(sum("syscall_bytes_total", {{"cgroup", cb.path()}, {"op", "write"}}), 3000 * 4096.0);
  EXPECT_EQ(sum("syscall_calls_total", {{"cgroup", cb.path()}, {"op", "fsync"}}), 0);
  // Each 4 KiB block written once: one page dirtied.
  EXPECT_EQ(sum("pagecache_dirtied_pages_total", {{"cgroup", ca.path()}}), 3 * 2048);
  EXPECT_EQ(sum("pagecache_dirtied_pages_total", {{"cgroup", cb.path()}}), 3000);

  // Every request the devices completed is charged, to the job that caused it and nobody else.
  long da = a1.requests() - a0.requests(), db = b1.requests() - b0.requests();
  std::printf("loop A: %ld requests (%ld writes, %ld flushes); loop B: %ld requests\n", da,
              a1.writes - a0.writes, a1.flushes - a0.flushes, db);
  EXPECT_GT(da, 0);
  EXPECT_GT(db, 0);
  EXPECT_EQ(sum("block_requests_total", {{"cgroup", ca.path()}, {"device", a.device()}}), da);
  EXPECT_EQ(sum("block_requests_total", {{"device", a.device()}}), da) << "charged to others";
  EXPECT_EQ(
      sum("block_requests_total", {{"cgroup", ca.path()}, {"device", a.device()}, {"op", "flush"}}),
      a1.flushes - a0.flushes);
  EXPECT_EQ(
      sum("block_requests_total", {{"cgroup", ca.path()}, {"device", a.device()}, {"op", "write"}}),
      a1.writes - a0.writes);
  EXPECT_EQ(sum("block_requests_total", {{"cgroup", cb.path()}, {"device", b.device()}}), db);
  EXPECT_EQ(sum("block_requests_total", {{"device", b.device()}}), db) << "charged to others";
  EXPECT_EQ(sum("block_requests_total", {{"cgroup", ca.path()}, {"device", b.device()}}), 0);
  EXPECT_EQ(sum("block_requests_total", {{"cgroup", cb.path()}, {"device", a.device()}}), 0);
  // B's requests were submitted by the test's sync, not by B: writeback, charged to its dirtier.
  EXPECT_EQ(sum("block_writeback_requests_total", {{"cgroup", cb.path()}, {"device", b.device()}}),
            db);
  EXPECT_EQ(sum("block_bytes_total", {{"cgroup", cb.path()}, {"op", "write"}}), 3000 * 4096.0);
  // Each job's user: of the calls, and of the writeback charged through the pages' dirtier.
  EXPECT_EQ(
      sum("syscall_bytes_total", {{"cgroup", cb.path()}, {"user", "nobody"}, {"op", "write"}}),
      3000 * 4096.0);
  // On their own devices: a job's first reads of its programs from the root disk are its own too.
  EXPECT_EQ(sum("block_requests_total",
                {{"cgroup", cb.path()}, {"device", b.device()}, {"user", "nobody"}}),
            db);
  EXPECT_EQ(sum("block_requests_total",
                {{"cgroup", ca.path()}, {"device", a.device()}, {"user", "root"}}),
            da);
  EXPECT_EQ(sum("pagecache_dirtied_pages_total", {{"cgroup", cb.path()}, {"user", "nobody"}}),
            3000);
  // Queue time (start to issue) of every request that went through the block layer's start: all
  // of B's writeback (its programs' first reads from the root disk are B's too: left out).
  EXPECT_EQ(sum("block_queue_seconds_count", {{"cgroup", cb.path()}, {"device", b.device()}}), db);
  // Latency histograms: every fsync and every issued request lands in one bucket.
  EXPECT_EQ(sum("syscall_latency_seconds_count", {{"cgroup", ca.path()}, {"op", "fsync"}}), 3);
  EXPECT_EQ(sum("syscall_latency_seconds_bucket",
                {{"cgroup", ca.path()}, {"op", "fsync"}, {"le", "+Inf"}}),
            3);
  EXPECT_GT(sum("block_service_seconds_count", {{"cgroup", ca.path()}, {"op", "write"}}), 0);
  EXPECT_EQ(sum("overflow_events_total", {}), 0);
}

TEST(Metrics, EndedCgroupIsReportedOnceMoreThenDropped) {
  TestCgroup c("ezio_metrics_end");
  int port = free_port();
  MetricsDaemon daemon({"--metrics", "127.0.0.1:" + std::to_string(port)});
  expect_success(
      c.spawn({"dd", "if=/dev/zero", "of=/dev/null", "bs=512", "count=10", "status=none"}));
  std::string alive = scrape(port);
  std::map<std::string, std::string> writes{{"cgroup", c.path()}, {"op", "write"}};
  EXPECT_EQ(sample_sum(alive, metric("syscall_bytes_total"), writes), 5120);
  c.remove();
  std::string last = scrape(port, true);
  EXPECT_EQ(sample_sum(last, metric("syscall_bytes_total"), writes), 5120) << "not reported again";
  EXPECT_EQ(sample_sum(last, metric("ended_cgroups_total"), {}), 1);
  EXPECT_TRUE(last.ends_with("# EOF\n"));
  EXPECT_FALSE(mentions_cgroup(scrape(port), c.path())) << "still reported";
}

// A job that starts and ends between two scrapes (a short Slurm step, `systemd-run --wait`, a
// cron job) is named by its path, kept when its cgroup was made: its directory is gone when the
// collector looks.
TEST(Metrics, ACgroupMadeAndRemovedBetweenScrapesIsNamed) {
  int port = free_port();
  MetricsDaemon daemon({"--metrics", "127.0.0.1:" + std::to_string(port)});
  std::string path;
  {
    TestCgroup c("ezio_metrics_brief");
    path = c.path();
    expect_success(
        c.spawn({"dd", "if=/dev/zero", "of=/dev/null", "bs=512", "count=10", "status=none"}));
  }
  std::string last = scrape(port, true);
  EXPECT_EQ(sample_sum(last, metric("syscall_bytes_total"), {{"cgroup", path}, {"op", "write"}}),
            5120)
      << last;
  EXPECT_GE(sample_sum(last, metric("ended_cgroups_total"), {}), 1);
  EXPECT_FALSE(mentions_cgroup(scrape(port), path)) << "still reported";
}

TEST(Metrics, EndpointSurvivesGarbageAndSlowClients) {
  int port = free_port();
  MetricsDaemon daemon({"--metrics", std::to_string(port)});
  // A silent client, held open while the others are served: it must not block them.
  int slow = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(connect(slow, reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0);
  (void)!send(slow, "GET /met", 8, 0);
  std::string garbage;
  for (int i = 0; i < 3000; ++i) garbage += char((i * 7919) % 256);
  EXPECT_TRUE(http_exchange(port, garbage + "\r\n\r\n").starts_with("HTTP/1.1 400"));
  EXPECT_TRUE(http_exchange(port, std::string(20000, 'A')).starts_with("HTTP/1.1 431"));
  EXPECT_TRUE(http_exchange(port, "POST /metrics HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 405"));
  EXPECT_TRUE(http_exchange(port, "GET /secret HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 404"));
  EXPECT_TRUE(http_exchange(port, "GET /metrics\r\n\r\n").starts_with("HTTP/1.1 400"));
  EXPECT_NE(scrape(port).find("eziotrace_series_limit 16384"), std::string::npos);
  // More idle clients at once than it serves: a request behind them waits until their deadline
  // frees room, then is answered.
  std::vector<int> many;
  for (int i = 0; i < 100; ++i) {
    int s = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(s, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0) many.push_back(s);
  }
  EXPECT_NE(scrape(port).find("eziotrace_series "), std::string::npos);
  for (int s : many) close(s);
  EXPECT_NE(scrape(port).find("eziotrace_series "), std::string::npos);
  // The silent client is cut off at its deadline.
  char c;
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(recv(slow, &c, 1, 0), 0);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(30));
  close(slow);
  EXPECT_EQ(kill(daemon.pid(), 0), 0) << "eziotraced died";
}

TEST(Metrics, WithoutMetricsNoProgramIsAttached) {
  MetricsDaemon plain({});
  EXPECT_EQ(links_of(plain.pid()), 0u) << "eziotraced attaches nothing while no session runs";
  int port = free_port();
  MetricsDaemon with({"--metrics", std::to_string(port)});
  // sys_enter, sys_exit, writeback_dirty_folio, block_io_start, block_rq_issue, block_rq_merge,
  // block_rq_complete, mm_filemap_add_to_page_cache, mm_filemap_get_pages,
  // mm_filemap_delete_from_page_cache, balance_dirty_pages, and the FS layer's ten (ext4's
  // da_write_end, write_end, sync_file_enter, _exit; xfs's four read and write, fsync; btrfs's),
  // and cgroup_mkdir (the names of the cgroups made between two scrapes).
  EXPECT_EQ(links_of(with.pid()), 22u) << "the metrics' programs";
  // A layer not kept loads nothing: the syscall and VFS series run in the two syscall programs.
  MetricsDaemon some({"--metrics", std::to_string(free_port()), "--metrics-layers", "syscall,vfs"});
  EXPECT_EQ(links_of(some.pid()), 3u);
}

TEST(Metrics, BadAddressIsAUsageError) {
  ezio::test::Run r =
      run({EZIO_DAEMON, "--foreground", "--socket", "/nonexistent/s", "--metrics", "x:y"});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("IPv4"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace ezio::test
