// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/metrics/fs_hooks.h"

#include <bpf/libbpf.h>

#include <string_view>

#include "common/error.h"
#include "common/log.h"
#include "hooks.h"
#include "recorder/probe/probe_kernel.h"
// After the layout it names (metrics.h).
#include "metrics.h"
#include "metrics.skel.h"

namespace ezio::recorder::metrics {
namespace {

struct FsTracepoint {
  std::string_view fs;
  bpf_program* prog;
  const char* tp;
};

// The tracepoints' programs of bpf/metrics_fs.bpf.h, by file system.
std::vector<FsTracepoint> fs_tracepoints(::metrics* skel) {
  auto& p = skel->progs;
  return {
      {"ext4", p.ezio_m_ext4_da_write_end, "ext4_da_write_end"},
      {"ext4", p.ezio_m_ext4_write_end, "ext4_write_end"},
      {"ext4", p.ezio_m_ext4_sync_enter, "ext4_sync_file_enter"},
      {"ext4", p.ezio_m_ext4_sync_exit, "ext4_sync_file_exit"},
      {"xfs", p.ezio_m_xfs_buffered_read, "xfs_file_buffered_read"},
      {"xfs", p.ezio_m_xfs_buffered_write, "xfs_file_buffered_write"},
      {"xfs", p.ezio_m_xfs_direct_read, "xfs_file_direct_read"},
      {"xfs", p.ezio_m_xfs_direct_write, "xfs_file_direct_write"},
      {"xfs", p.ezio_m_xfs_fsync, "xfs_file_fsync"},
      {"btrfs", p.ezio_m_btrfs_sync, "btrfs_sync_file"},
  };
}

struct FsFunction {
  std::string_view fs;
  const char* function;
};

// bpf/hooks.h's file operations: the programs ezio_m_fs_<function>_entry and _exit.
#define EZIO_M_FS_FUNCTION(fs, fn, op, shape) {#fs, #fn},
constexpr FsFunction kFsFunctions[] = {EZIO_FS_FUNCTIONS(EZIO_M_FS_FUNCTION)};
#undef EZIO_M_FS_FUNCTION

void set_fentry_autoload(::metrics* skel, const char* function, bool on) {
  for (const char* end : {"_entry", "_exit"}) {
    std::string name = fmt::format("ezio_m_fs_{}{}", function, end);
    bpf_program* p = bpf_object__find_program_by_name(skel->obj, name.c_str());
    if (!p) fail("the metrics' BPF object has no program {}", name);
    bpf_program__set_autoload(p, on);
  }
}

// Whether every function of fs takes fentry; says why not in the log.
bool fentry_attaches(std::string_view fs, KernelProber& kernel) {
  for (const FsFunction& f : kFsFunctions) {
    if (f.fs != fs) continue;
    ProbeOutcome o = kernel.fentry(f.function);
    if (!o.ok) {
      spdlog::info("metrics: {} heard by its tracepoints (fentry on {}: {})", fs, f.function,
                   o.why);
      return false;
    }
  }
  spdlog::info("metrics: {} heard by fentry/fexit on its file operations", fs);
  return true;
}

}  // namespace

std::vector<FsHook> plan_fs_hooks(
    ::metrics* skel, bool kept,
    const std::function<bool(const char*, const char*)>& has_tracepoint) {
  std::vector<FsHook> out;
  std::vector<std::string_view> systems;
  for (const FsFunction& f : kFsFunctions) {
    if (systems.empty() || systems.back() != f.fs) systems.push_back(f.fs);
  }
  KernelProber kernel;
  for (std::string_view fs : systems) {
    bool fentry = kept && fentry_attaches(fs, kernel);
    for (const FsFunction& f : kFsFunctions) {
      if (f.fs == fs) set_fentry_autoload(skel, f.function, fentry);
    }
    bool tracepoints = false;
    for (const FsTracepoint& t : fs_tracepoints(skel)) {
      if (t.fs != fs) continue;
      bool on = kept && !fentry && has_tracepoint(std::string(t.fs).c_str(), t.tp);
      if (kept && !fentry && !on)
        spdlog::warn("metrics: this kernel has no usable {} tracepoint; its series are not kept",
                     t.tp);
      bpf_program__set_autoload(t.prog, on);
      tracepoints = tracepoints || on;
    }
    if (kept)
      out.push_back({std::string(fs), fentry ? "fentry" : tracepoints ? "tracepoint" : "none"});
  }
  return out;
}

}  // namespace ezio::recorder::metrics
