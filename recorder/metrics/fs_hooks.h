// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// How the metrics' FS layer hears each file system (bpf/metrics_fs.bpf.h): fentry/fexit on its
// own file operations where every one of them takes it (every read, write and fsync, with bytes
// and duration), else its tracepoints (what they show: docs/metrics.md).
#include <functional>
#include <string>
#include <vector>

struct metrics;

namespace ezio::recorder::metrics {

struct FsHook {
  std::string fstype;  // "ext4", "xfs", "btrfs"
  std::string mode;    // "fentry", "tracepoint", "none" (neither on this kernel)
};

// Sets which of the FS layer's programs load: per file system, the fentry pair of each of its
// functions (probed: a minimal program loaded and attached) or its tracepoints' programs that
// has_tracepoint(fs, tracepoint) finds. Without the layer (kept false), none, and no file system is
// listed.
std::vector<FsHook> plan_fs_hooks(
    ::metrics* skel, bool kept,
    const std::function<bool(const char*, const char*)>& has_tracepoint);

}  // namespace ezio::recorder::metrics
