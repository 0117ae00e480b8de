// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// What an earlier recording learnt about this kernel, kept until reboot in /run/eziotrace/cache (as
// root; else $XDG_RUNTIME_DIR/eziotrace; EZIOTRACE_CACHE_DIR overrides both), so that a recording
// starts without probing again (what each saves: docs/costs.md):
//  - the hook plan of each layer set (probing: trial loads);
//  - the few kernel types the BPF programs read, cut out of the kernel's BTF
//    (recorder/probe/core_btf.h): libbpf's CO-RE relocations then scan those instead of the whole
//    kernel's per struct;
//  - the ids of the programs' attach points in the kernel's BTF (recorder/probe/attach_ids.h):
//    libbpf would otherwise parse the kernel's whole BTF to find them at each load.
// Everything is keyed on the kernel (build id, release, version, the modules' BTF), on this
// eziotrace executable and on EZIOTRACE_DENY_HOOKS: any change misses. A kept plan or type file
// that fails to load is forgotten and the kernel probed again (load_kernel_programs). Files are
// trusted only in a directory of the effective user's own, mode 0700.
#include <filesystem>
#include <future>
#include <optional>
#include <string>

#include "recorder/probe/attach_ids.h"
#include "recorder/probe/probe.h"

namespace ezio::recorder {

class KernelCache {
 public:
  // Not enabled (--no-probe-cache), or no usable directory: every lookup misses, nothing is kept.
  explicit KernelCache(bool enabled);

  std::optional<ProbePlan> plan(const LayerSet& layers) const;
  void keep_plan(const LayerSet& layers, const ProbePlan& plan) const;
  // The cut-down type file's path, "" when there is none. Kept: ready at once. Otherwise made in
  // the background (bpftool, while the kernel is probed) and kept for the next recordings.
  std::future<std::string> core_btf() const;
  // The attach points of the BTF-attached programs of these sections (recorder/probe/attach_ids.h):
  // kept, or found in the kernel's BTF and kept along with those kept already.
  AttachIds attach_ids(const std::vector<std::string>& sections) const;
  // Removes what is kept for this kernel and executable, after it failed to load; the cut-down
  // types are not made again for them.
  void forget() const;

  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path file(const std::string& suffix) const;
  // Removes the cache's files of this key, or those of every other key; nothing else.
  void remove_files(bool of_this_key) const;

  std::filesystem::path dir_;  // empty: disabled
  std::string key_;
};

}  // namespace ezio::recorder
