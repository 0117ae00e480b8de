// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// What `eziotrace top` shows: eziotraced's exposition (its HTTP endpoint or its textfile) parsed
// into per-job totals, and two of them turned into rates per second and p99 latencies over the
// time between them. No BPF and no privilege: any user who can read the endpoint can run it.
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace ezio::recorder::metrics {

// One job's cumulative figures in one exposition. counters: read_bytes, write_bytes, read_calls,
// write_calls, fsyncs, fs_calls (the FS layer's), block_read_bytes, block_write_bytes,
// block_requests, dirtied_pages, accessed_pages, missed_pages, readahead_pages, evicted_pages,
// throttled_seconds. histograms (cumulative count per upper bound, +Inf as infinity): syscall_read,
// syscall_write, block_service, block_queue, fs_read, fs_write.
struct JobTotals {
  std::string cgroup;
  std::string device;             // a device's line (`top --by device`): its name, cgroup empty
  std::set<std::string> cgroups;  // a device's: the jobs charged with its I/O
  std::string fstype;             // a device's file system and mount points, from its VFS series
  std::set<std::string> mounts;
  std::string job_id;
  std::string unit;  // the systemd unit and slice, when not Slurm's
  std::string slice;
  std::string user_unit;  // the user's own unit below a user manager
  std::set<std::string> users;
  std::map<std::string, double> counters;
  std::map<std::string, std::map<double, double>> histograms;
};

struct NodeSample {
  double time_s = 0;                      // when it was taken (seconds, any origin)
  std::map<std::string, JobTotals> jobs;  // by cgroup path (or device name); see TopBy
};

// What a line of `top` is. job: a cgroup (series of no job are left out). device: a block device
// or a file system's device (the series with a device label, no one's included), with its block
// requests and bytes, the page cache's pages, the VFS calls' bytes (vfs_read_bytes,
// vfs_write_bytes) and the requests of no job (unattributed_requests).
enum class TopBy { job, device };

// The exposition text (Prometheus 0.0.4 or OpenMetrics) of eziotraced as per-job (or per-device)
// totals.
NodeSample parse_exposition(const std::string& text, double time_s, TopBy by = TopBy::job);

// A job between two samples: its totals at the second, rates per second and p99s over the time
// between them (no p99 when the histogram counted nothing meanwhile).
struct JobView {
  const JobTotals* now = nullptr;
  std::map<std::string, double> per_second;
  std::map<std::string, std::optional<double>> p99_seconds;
  double sort_value = 0;
};

// The sort keys `top --sort` takes, the first being the default.
const std::vector<std::string>& sort_keys();

// The jobs of `now`, with their rates since `before` (a job absent then counts from zero),
// ordered by sort_key (descending; "cgroup" and "device" ascending by name).
std::vector<JobView> job_views(const NodeSample& before, const NodeSample& now,
                               const std::string& sort_key);

// The frame as text: a header line, then one line per job (at most limit, 0: all).
std::string format_table(const std::vector<JobView>& jobs, const std::string& title, size_t limit);
// What a person reads for a device: its block name, or, for a file system without a block device
// (proc, tmpfs, overlay: named `major:minor` by the kernel), its type and shortest mount point.
std::string device_display_name(const JobTotals& device);

// The same, one line per device (`top --by device`).
std::string format_device_table(const std::vector<JobView>& devices, const std::string& title,
                                size_t limit);
// The frame as one JSON object.
nlohmann::json frame_json(const std::vector<JobView>& jobs, const std::string& source,
                          double interval_s, double unix_time);

}  // namespace ezio::recorder::metrics
