#include "recorder/probe_apply.h"

#include <bpf/libbpf.h>

#include <string_view>

// The skeleton uses the record layout's types without including it.
#include "record.h"
// (keep this order)
#include "common/error.h"
#include "common/log.h"
#include "eziotrace.skel.h"
#include "recorder/probe.h"
#include "recorder/probe_kernel.h"
#include "recorder/syscall_table.h"
#include "recorder/vfs_events.h"

namespace ezio::recorder {
namespace {

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// Programs of the tracepoint-only layers (bpf/block*.h, bpf/pagecache*.h), by attach point.
int tracepoint_layer(std::string_view section) {
  if (starts_with(section, "tp_btf/block_")) return EZIO_LAYER_BLOCK;
  if (starts_with(section, "tp_btf/mm_filemap_") || starts_with(section, "tp_btf/writeback_")) {
    return EZIO_LAYER_PAGECACHE;
  }
  return -1;
}

}  // namespace

void apply_probe_plan(eziotrace* skel, const ProbePlan& plan) {
  if (!denied_hook_kinds().empty()) {
    // The archive then shows the fallbacks, not what this kernel can do: say so where it is made.
    spdlog::warn("EZIOTRACE_DENY_HOOKS: {} hooks treated as unavailable",
                 fmt::join(denied_hook_kinds(), ", "));
  }
  spdlog::debug("VFS layer hooked with {}", vfs_hook_name(plan.vfs_hook));
  bpf_program* prog;
  bpf_object__for_each_program(prog, skel->obj) {
    std::string_view name = bpf_program__name(prog);
    bool autoload = true;
    if (starts_with(name, "ezio_vfs_") || starts_with(name, "ezio_fs_")) {
      autoload = plan.programs.count(std::string(name)) > 0;
    } else if (int layer = tracepoint_layer(bpf_program__section_name(prog)); layer >= 0) {
      autoload = plan.layers[layer].on;
      // A tracepoint this kernel does not have (block_io_start came with 6.5,
      // mm_filemap_get_pages with 6.8): that one program stays out instead of failing the load.
      std::string_view section = bpf_program__section_name(prog);
      auto attached = [&plan](std::string_view tp) {
        auto it = plan.tracepoints.find(std::string(tp));
        // Tried by the planner (recorder/probe.cpp) with the rest of its layer, once.
        if (it == plan.tracepoints.end()) fail("BPF program on {} whose hook was not probed", tp);
        return it->second;
      };
      if (section == "tp_btf/block_getrq") autoload = autoload && !attached("block_io_start");
      if (autoload && !attached(section.substr(7))) {
        spdlog::warn("{}: not on this kernel, that hook is left out", section);
        autoload = false;
      }
    }
    if (int err = bpf_program__set_autoload(prog, autoload)) {
      fail("cannot select BPF program {}: {}", name, errno_text(-err));
    }
  }
  skel->rodata->vfs_derived = plan.vfs_derived && plan.layers[EZIO_LAYER_VFS].on;
  for (const auto& sc : syscall_table()) {
    skel->rodata->vfs_op_of_nr[sc.nr] = vfs_op_of_syscall(sc.name);
  }
}

}  // namespace ezio::recorder
