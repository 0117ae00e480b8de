// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The always-on metrics' BPF programs (bpf/metrics.bpf.c), loaded and attached for the lifetime
// of this object, for every process of the node; their table read by the collector. Root only.
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "metrics.h"
#include "recorder/metrics/fs_hooks.h"

struct metrics;

namespace ezio::recorder::metrics {

struct Series {
  ezio_metric_key key{};
  ezio_metric_value value{};
};

// The layers kept: each one's programs load only when it is kept (the VFS layer's run in the
// system calls' programs, the block layer needs the page cache's dirtying program).
struct MetricsLayers {
  bool syscall = true, vfs = true, fs = true, pagecache = true, block = true;
};

// "all" or a comma-separated list of syscall, vfs, fs, pagecache, block; fails (ezio::Error)
// naming what it does not know.
MetricsLayers parse_metrics_layers(const std::string& spec);

// How the syscall and VFS series are counted: fentry/fexit on the counted system calls' functions
// (only they pay), else the raw sys_enter/sys_exit tracepoints (every system call of the node
// pays); none without those layers.
enum class SyscallHook { none, tracepoint, fentry };

// "fentry", "tracepoint", "none": the label and what `service status` shows.
const char* syscall_hook_name(SyscallHook h);

struct MetricsConfig {
  uint32_t max_series = 16384;  // the table's size: what does not fit is counted in overflow()
  uint32_t max_mounts = 256;    // VFS mounts told apart, the others are counted as one
  MetricsLayers layers;
  // One counted call in latency_every per CPU is timed for the latency histograms (the sync
  // calls always); 1: every call. Counts, bytes and errors are exact whatever it is.
  uint32_t latency_every = 16;
};

class MetricsPrograms {
 public:
  // Fails (ezio::Error) when the programs do not load or attach.
  explicit MetricsPrograms(const MetricsConfig& config);
  ~MetricsPrograms();
  MetricsPrograms(const MetricsPrograms&) = delete;
  MetricsPrograms& operator=(const MetricsPrograms&) = delete;

  // Every series in the table now (the programs go on counting meanwhile: each one read whole,
  // as its counters were at that instant, near enough).
  std::vector<Series> read() const;
  // Removes series (of a cgroup that ended, reported for the last time).
  void forget(const std::vector<ezio_metric_key>& keys) const;
  // The mounts holding a slot of the VFS layer's mount table (--metrics-max-mounts), by id.
  std::vector<uint32_t> mount_ids() const;
  // Frees the slots of mounts gone (their series reported for the last time, then forgotten).
  void forget_mounts(const std::vector<uint32_t>& ids) const;
  // The path of a cgroup made while the programs ran (kept when it was made, even after its
  // removal), or nothing (made before, or its name pushed out by newer ones).
  std::optional<std::string> made_cgroup_path(uint64_t id) const;
  // Drops those names (of cgroups that ended, reported for the last time).
  void forget_cgroup_names(const std::set<uint64_t>& ids) const;
  // Events that found no room in the table, per enum ezio_metric_op.
  std::array<uint64_t, EZIO_M_OP_COUNT> overflow() const;
  uint32_t max_series() const { return max_series_; }
  uint32_t latency_every() const { return latency_every_; }
  uint32_t max_mounts() const { return max_mounts_; }
  // Chosen at load: fentry where the kernel attaches it (EZIOTRACE_DENY_HOOKS=fentry refuses it).
  SyscallHook syscall_hook() const { return hook_; }
  // How each file system's FS series are heard (fentry or its tracepoints); empty without the
  // layer.
  const std::vector<FsHook>& fs_hooks() const { return fs_hooks_; }
  // The programs attached (the tests count them).
  size_t attached_programs() const;

 private:
  struct Destroy {
    void operator()(::metrics* skel) const;
  };
  std::unique_ptr<::metrics, Destroy> skel_;
  void free_slot(uint32_t slot) const;
  uint32_t max_series_;
  uint32_t max_mounts_;
  uint32_t latency_every_;
  uint32_t hot_slots_ = 0;
  mutable std::vector<uint32_t> released_;  // slots of dropped series, freed at the next forget
  SyscallHook hook_ = SyscallHook::none;
  std::vector<FsHook> fs_hooks_;
};

}  // namespace ezio::recorder::metrics
