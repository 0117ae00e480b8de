// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// What the metrics tests share: cgroups of their own under the cgroup v2 mount, programs started
// inside one, eziotraced with --metrics on a free port, an HTTP client, the exposition parsed.
#include <sys/types.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "run.h"

namespace ezio::test {

// A cgroup v2 of the test's own, removed at the end (its processes must have ended).
class TestCgroup {
 public:
  explicit TestCgroup(const std::string& name);
  // One named as systemd names a transient scope, /<slice>/<name>-PID.scope (the slice made, and
  // removed at the end, when absent): the metrics label it with that unit and slice.
  struct SystemdScope {
    std::string slice, name;
  };
  explicit TestCgroup(const SystemdScope& scope);
  ~TestCgroup();
  const std::string& path() const { return path_; }  // as the metrics label it: "/name"
  // Starts argv inside the cgroup from its first instruction (moved in before its exec).
  pid_t spawn(const std::vector<std::string>& argv) const;
  // Moves a running process (all its threads) into the cgroup.
  void adopt(pid_t pid) const;
  void remove();

 private:
  std::filesystem::path dir_;
  std::filesystem::path made_slice_;  // the scope's slice when this made it
  std::string path_;
  bool removed_ = false;
};

// Waits for pid; fails the test unless it exited 0.
void expect_success(pid_t pid);

// /sys/block/<dev>/stat: fields 1 (reads), 5 (writes), 12 (discards), 16 (flushes).
struct DiskStat {
  long reads = 0, writes = 0, discards = 0, flushes = 0;
  long requests() const { return reads + writes + discards + flushes; }
};
DiskStat disk_stat(const std::string& dev);

// A TCP port nothing listens on now.
int free_port();

// eziotraced --foreground on a private socket with `extra` options, until destroyed.
class MetricsDaemon {
 public:
  explicit MetricsDaemon(const std::vector<std::string>& extra);
  pid_t pid() const { return daemon_->pid(); }

 private:
  std::unique_ptr<Background> daemon_;
};

// Sends `request` to 127.0.0.1:port and reads until the server closes ("" when it cannot connect).
std::string http_exchange(int port, const std::string& request);
// The body of GET /metrics (OpenMetrics when asked), failing the test unless the answer is 200.
std::string scrape(int port, bool openmetrics = false);

// The sum of the samples of `name` whose labels include `labels` (exposition text).
double sample_sum(const std::string& text, const std::string& name,
                  const std::map<std::string, std::string>& labels);
// Whether any sample carries the label cgroup="<path>".
bool mentions_cgroup(const std::string& text, const std::string& path);

// The BPF links whose fds pid holds (from /proc/PID/fdinfo).
size_t links_of(pid_t pid);

}  // namespace ezio::test
