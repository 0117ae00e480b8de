// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/load/probe_apply.h"

#include <bpf/libbpf.h>

#include <string_view>
#include <utility>

#include "common/error.h"
#include "common/log.h"
#include "recorder/core/skeleton.h"
#include "recorder/core/syscall_table.h"
#include "recorder/core/vfs_events.h"
#include "recorder/probe/probe.h"
#include "recorder/probe/probe_kernel.h"

namespace ezio::recorder {
namespace {

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// Programs of the tracepoint-only layers (bpf/block*.h, bpf/pagecache*.h), by attach point.
int tracepoint_layer(std::string_view section) {
  if (starts_with(section, "tp_btf/block_")) return EZIO_LAYER_BLOCK;
  if (starts_with(section, "tp_btf/mm_filemap_") || starts_with(section, "tp_btf/writeback_") ||
      section == "tp_btf/balance_dirty_pages" || section == "tp_btf/sched_switch") {
    return EZIO_LAYER_PAGECACHE;
  }
  return -1;
}

// The tables only the programs of unrecorded layers (or of hooks not chosen or not loaded) use get
// one entry: a preallocated table of 65536 entries costs megabytes and milliseconds of start-up
// for nothing. Each stays defined, since the loaded programs may still name it in dead code.
void shrink_unused_tables(eziotrace* skel, const ProbePlan& plan) {
  auto on = [&plan](unsigned layer) { return plan.layers[layer].on; };
  bool pagecache = on(EZIO_LAYER_PAGECACHE), block = on(EZIO_LAYER_BLOCK);
  const std::pair<bpf_map*, bool> tables[] = {
      {skel->maps.block_reqs, block},
      {skel->maps.block_bio_owners, block},
      {skel->maps.cache_owners, pagecache},
      {skel->maps.dirtiers, pagecache || block},  // written by page dirtying, read by writeback
      {skel->maps.files_seen, on(EZIO_LAYER_VFS)},
      {skel->maps.vfs_pending, on(EZIO_LAYER_VFS) && !plan.vfs_derived},
      {skel->maps.fs_pending, on(EZIO_LAYER_FS)},
  };
  for (const auto& [map, used] : tables) {
    if (used) continue;
    if (int err = bpf_map__set_max_entries(map, 1)) {
      fail("cannot resize table {}: {}", bpf_map__name(map), errno_text(-err));
    }
  }
}

// The planner names the programs by bpf/hooks.h's rule: one the object lacks would leave its hook
// silently unrecorded.
void check_planned_programs(const eziotrace* skel, const ProbePlan& plan) {
  for (const auto& name : plan.programs) {
    if (!bpf_object__find_program_by_name(skel->obj, name.c_str())) {
      fail("the probe plan names BPF program {}, which the BPF object does not have", name);
    }
  }
}

}  // namespace

void apply_probe_plan(eziotrace* skel, const ProbePlan& plan) {
  if (!denied_hook_kinds().empty()) {
    // The archive then shows the fallbacks, not what this kernel can do: say so where it is made.
    spdlog::warn("EZIOTRACE_DENY_HOOKS: {} hooks treated as unavailable",
                 fmt::join(denied_hook_kinds(), ", "));
  }
  spdlog::debug("VFS layer hooked with {}", vfs_hook_name(plan.vfs_hook));
  check_planned_programs(skel, plan);
  bpf_program* prog;
  bpf_object__for_each_program(prog, skel->obj) {
    std::string_view name = bpf_program__name(prog);
    bool autoload = true;
    // The syscall layer's programs too: its tracepoints or its fentry programs, never both
    // (recorder/probe/probe.cpp, plan_syscall).
    if (starts_with(name, "ezio_vfs_") || starts_with(name, "ezio_fs_") ||
        starts_with(name, "ezio_sc_") || name == "ezio_sys_enter" || name == "ezio_sys_exit") {
      autoload = plan.programs.count(std::string(name)) > 0;
    } else if (int layer = tracepoint_layer(bpf_program__section_name(prog)); layer >= 0) {
      autoload = plan.layers[layer].on;
      // A tracepoint this kernel does not have (block_io_start came with 6.5,
      // mm_filemap_get_pages with 6.8): that one program stays out instead of failing the load.
      std::string_view section = bpf_program__section_name(prog);
      auto attached = [&plan](std::string_view tp) {
        auto it = plan.tracepoints.find(std::string(tp));
        // Tried by the planner (recorder/probe/probe.cpp) with the rest of its layer, once.
        if (it == plan.tracepoints.end()) fail("BPF program on {} whose hook was not probed", tp);
        return it->second;
      };
      if (section == "tp_btf/block_getrq") autoload = autoload && !attached("block_io_start");
      // A pause is ended by sched_switch; one program per argument layout of the tracepoint
      // (bpf/pagecache.bpf.h, probe.cpp plan_dirty_throttle).
      if (section == "tp_btf/sched_switch") autoload = autoload && plan.dirty_throttle_args > 0;
      if (section == "tp_btf/balance_dirty_pages") {
        autoload = autoload && name == fmt::format("ezio_pc_throttle_{}", plan.dirty_throttle_args);
      }
      if (autoload && !attached(section.substr(7))) {
        spdlog::warn("{}: not on this kernel, that hook is left out", section);
        autoload = false;
      }
    }
    if (int err = bpf_program__set_autoload(prog, autoload)) {
      fail("cannot select BPF program {}: {}", name, errno_text(-err));
    }
  }
  shrink_unused_tables(skel, plan);
  skel->rodata->vfs_derived = plan.vfs_derived && plan.layers[EZIO_LAYER_VFS].on;
  for (const auto& sc : syscall_table()) {
    skel->rodata->vfs_op_of_nr[sc.nr] = vfs_op_of_syscall(sc.name);
    skel->rodata->fs_capped_nr[sc.nr] = fs_bytes_capped(sc.name);
  }
}

}  // namespace ezio::recorder
