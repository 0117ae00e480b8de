// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The metrics as text: OpenMetrics 1.0 (what Prometheus asks for) or Prometheus' text format
// 0.0.4 (what node_exporter's textfile collector reads).
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "recorder/metrics/metrics_programs.h"

namespace ezio::recorder::metrics {

enum class Format { kOpenMetrics, kPrometheus };

// The content type of a format, for an HTTP answer.
const char* content_type(Format f);

// A series with its job: the cgroup's path (empty for what is no job's), Slurm's job id when the
// path is Slurm's, else the systemd unit and slice the path is in (systemd_unit.h), the user's
// name (its uid when it has none), the block device's name.
struct NamedSeries {
  Series s;
  std::string cgroup;
  std::string job_id;
  std::string unit;
  std::string slice;
  std::string user_unit;  // the user's own unit below a user manager (systemd_unit.h)
  std::string device;
  std::string user;
  std::string fstype;  // VFS and FS series
  std::string mount;
};

struct Snapshot {
  std::vector<NamedSeries> series;
  std::array<uint64_t, EZIO_M_OP_COUNT> overflow{};
  uint32_t max_series = 0;
  uint32_t latency_every = 1;         // the syscall and VFS latency: one call in N timed
  uint64_t ended_cgroups = 0;         // reported for the last time, since eziotraced started
  uint64_t ended_mounts = 0;          // unmounted, reported for the last time, slot freed
  uint32_t mounts = 0;                // holding a slot of the mount table
  uint32_t max_mounts = 0;            // its size (--metrics-max-mounts)
  std::string syscall_hook = "none";  // syscall_hook_name()
  std::vector<FsHook> fs_hooks;       // how each file system's FS series are heard
};

std::string expose(const Snapshot& snap, Format f);

// The name of an operation as its label shows it ("read", "fsync", "write" …).
const char* op_name(uint16_t op);

}  // namespace ezio::recorder::metrics
