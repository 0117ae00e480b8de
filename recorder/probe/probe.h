// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Run-time choice of the hook of every layer (`--layers`, `eziotrace probes`): each layer has a
// preferred hook and fallbacks, and the first one that really loads and attaches is taken.
#include <array>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "record.h"

namespace ezio::recorder {

// Layers selected with --layers (enum ezio_layer order; process bookkeeping is always on).
using LayerSet = std::array<bool, EZIO_LAYER_COUNT>;
// "syscall,vfs,fs,pagecache,block" (any subset, or "all"); fails on an unknown name.
LayerSet parse_layers(const std::string& text);
LayerSet all_layers();

struct HookTrial {
  std::string hook;  // e.g. "fentry/vfs_read", "tp_btf/ext4_da_write_begin"
  bool ok = false;
  std::string why;
};

struct LayerPlan {
  bool on = false;
  std::string hook;      // what the layer uses, e.g. "fentry/fexit vfs_read,vfs_write"
  std::string accuracy;  // "exact", "derived", "mixed" or "off"
};

// How the VFS layer is hooked, in order of preference: fentry/fexit and kprobe/kretprobe give the
// real entry and exit times, derived takes them from the syscall.
enum class VfsHook { off, fentry, kprobe, derived };
const char* vfs_hook_name(VfsHook h);

struct ProbePlan {
  std::array<LayerPlan, EZIO_LAYER_COUNT> layers;
  VfsHook vfs_hook = VfsHook::off;
  bool vfs_derived = false;        // vfs_hook == derived
  std::set<std::string> programs;  // VFS/FS BPF programs to load (skeleton program names)
  std::vector<std::pair<unsigned, HookTrial>> trials;  // layer, what was tried
  // Every tracepoint of the page-cache and block layers' programs, and whether it attached here.
  std::map<std::string, bool> tracepoints;
  // Arguments of writeback:balance_dirty_pages on this kernel (8 since 6.10, 12 before; 0 when it
  // did not attach or its layout is unknown): bpf/pagecache.bpf.h has one program per layout.
  int dirty_throttle_args = 0;
};

// Probes this kernel for the selected layers.
ProbePlan plan_probes(const LayerSet& layers);
// The hook string recorded in the archive (EZIOTRACE::PROBE::<layer>): "<hook> (<accuracy>)".
std::string probe_property(const LayerPlan& p);

}  // namespace ezio::recorder
