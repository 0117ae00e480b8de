// SPDX-License-Identifier: GPL-2.0-only
// KernelPrograms' hooks: attached at the load (the in-process recorder) or later, and again after
// a detach (eziotraced: only while a session needs them); and load_kernel_programs, which probes
// the hooks and loads.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <array>
#include <future>
#include <optional>
#include <utility>
#include <vector>

#include "common/error.h"
#include "common/log.h"
#include "hooks.h"
#include "recorder/core/bpf_object.h"
#include "recorder/core/concurrent_close.h"
#include "recorder/core/recording_info.h"
#include "recorder/core/skeleton.h"
#include "recorder/load/kernel_programs.h"
#include "recorder/probe/kernel_cache.h"

namespace ezio::recorder {

std::vector<std::pair<std::string, int>> KernelPrograms::loaded_programs() const {
  std::vector<std::pair<std::string, int>> loaded;
  for (const auto& loader : loaders_) {
    bpf_program* prog;
    bpf_object__for_each_program(prog, loader->skeleton()->obj) {
      if (int fd = bpf_program__fd(prog); fd >= 0) loaded.emplace_back(bpf_program__name(prog), fd);
    }
  }
  return loaded;
}

// The syscalls' fentry and fexit programs tail-call their shared bodies through sc_entry_bodies
// and sc_exit_bodies (bpf/syscall_functions.bpf.h); one that finds its body missing counts the call
// lost. Put there once both halves are loaded, before any of them is attached. Nothing to do with
// the tracepoints.
void KernelPrograms::put_syscall_body(const char* name, const bpf_map* table) {
  if (!plan_.programs.count(name)) return;
  for (const auto& loader : loaders_) {
    bpf_program* body = bpf_object__find_program_by_name(loader->skeleton()->obj, name);
    int fd = body ? bpf_program__fd(body) : -1;
    if (fd < 0) continue;  // loaded by the other half
    uint32_t key = 0;
    if (bpf_map_update_elem(bpf_map__fd(table), &key, &fd, BPF_ANY)) {
      fail("cannot put the syscalls' body {} in its table: {}", name, errno_text(errno));
    }
    return;
  }
  fail("the syscalls' body {} was planned but loaded by neither half", name);
}

// Each half attached as it loads (when attached_), but with the syscalls' shared bodies, which
// must be in their tables before their programs are hooked: then both are attached after both
// loads.
std::array<uint64_t, 2> KernelPrograms::load_and_attach_halves() {
  const bool shared_bodies = plan_.programs.count(EZIO_HOOK_STR(EZIO_SC_EXIT_BODY)) > 0;
  const bool attach_now = attached_ && !shared_bodies;
  auto took = load_halves(loaders_, attach_now);
  put_syscall_body(EZIO_HOOK_STR(EZIO_SC_ENTRY_BODY), skel_->maps.sc_entry_bodies);
  put_syscall_body(EZIO_HOOK_STR(EZIO_SC_EXIT_BODY), skel_->maps.sc_exit_bodies);
  if (attached_ && !attach_now) {
    attached_ = false;
    attach();
  }
  return took;
}

void KernelPrograms::attach() {
  if (attached_) return;
  attached_ = true;  // a failure leaves some attached: detach() unhooks those
  uint64_t t0 = monotonic_ns();
  // Both halves at once. More threads gained nothing in the 6.1 guest, on one vCPU or two: the
  // kernel hooks one function at a time (docs/costs.md, "The entries shared too, and attaching the
  // trampolines").
  auto second = std::async(std::launch::async, [&loader = *loaders_[1]] { loader.attach(); });
  loaders_[0]->attach();
  second.get();
  spdlog::debug("BPF programs attached in {:.1f} ms", (monotonic_ns() - t0) / 1e6);
}

void KernelPrograms::detach() {
  std::vector<bpf_link*> links, kprobes;
  for (const auto& loader : loaders_) {
    if (!loader) continue;  // a load that failed before the halves were opened
    const bpf_object_skeleton* s = loader->skeleton()->skeleton;
    for (int i = 0; i < s->prog_cnt; ++i) {
      bpf_link** link = s->progs[i].link;
      if (!*link) continue;
      bool kprobe = bpf_program__type(*s->progs[i].prog) == BPF_PROG_TYPE_KPROBE;
      (kprobe ? kprobes : links).push_back(std::exchange(*link, nullptr));
    }
  }
  destroy_concurrently(links, kprobes);
  attached_ = false;
}

void KernelPrograms::forget_in_flight() const {
  if (attached_) fail("the BPF programs are attached: what is in flight is still theirs");
  // Operations that began while the programs were attached and ended after: their ends were not
  // seen, and no program runs to remove them.
  for (const char* name : {"block_reqs", "flush_cause", "vfs_pending", "fs_pending"}) {
    const bpf_map* map = bpf_object__find_map_by_name(skel_->obj, name);
    if (!map) continue;
    int fd = bpf_map__fd(map);
    std::vector<char> key(bpf_map__key_size(map));
    // No program adds any meanwhile: the first key, deleted, until there is none.
    while (bpf_map_get_next_key(fd, nullptr, key.data()) == 0) {
      if (bpf_map_delete_elem(fd, key.data()) != 0) break;
    }
  }
}

std::unique_ptr<KernelPrograms> load_kernel_programs(const LayerSet& layers, bool use_cache,
                                                     std::future<RingSet> first_ring, bool attach) {
  route_libbpf_logs();
  KernelCache cache(use_cache);
  uint64_t t_plan = monotonic_ns();
  std::future<std::string> core_btf = cache.core_btf();  // made while the kernel is probed
  std::optional<ProbePlan> kept = cache.plan(layers);
  ProbePlan plan = kept ? std::move(*kept) : plan_probes(layers);
  std::string btf = core_btf.get();
  if (!kept) cache.keep_plan(layers, plan);
  spdlog::debug("hooks {} in {:.3f} s", kept ? "taken from the probe cache" : "probed",
                (monotonic_ns() - t_plan) / 1e9);
  uint64_t t_load = monotonic_ns();
  std::unique_ptr<KernelPrograms> programs;
  try {
    programs = std::make_unique<KernelPrograms>(plan, cache, btf, std::move(first_ring), attach);
  } catch (const Error& e) {
    if (!kept && btf.empty()) throw;
    spdlog::warn("what the probe cache kept for this kernel failed to load ({}); {}", e.what(),
                 kept ? "probing again" : "loading without the cut-down kernel types");
    cache.forget();
    btf.clear();
    if (kept) {
      plan = plan_probes(layers);
      cache.keep_plan(layers, plan);
    }
    programs = std::make_unique<KernelPrograms>(plan, cache, std::string(), std::future<RingSet>(),
                                                attach);
  }
  spdlog::debug("BPF programs loaded{} in {:.3f} s{}", attach ? " and attached" : "",
                (monotonic_ns() - t_load) / 1e9,
                btf.empty() ? "" : " (kernel types cut down to the programs' own)");
  return programs;
}

}  // namespace ezio::recorder
