// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/load/split_load.h"

#include <bpf/libbpf.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <future>
#include <utility>

#include "common/error.h"
#include "hooks.h"
#include "recorder/core/recording_info.h"
#include "recorder/core/skeleton.h"

namespace ezio::recorder {

bool is_syscall_body(const char* program) {
  return std::strcmp(program, EZIO_HOOK_STR(EZIO_SC_ENTRY_BODY)) == 0 ||
         std::strcmp(program, EZIO_HOOK_STR(EZIO_SC_EXIT_BODY)) == 0;
}

void SkeletonDeleter::operator()(eziotrace* s) const { eziotrace__destroy(s); }

Skeleton open_skeleton(const std::string& core_btf) {
  LIBBPF_OPTS(bpf_object_open_opts, open_opts);
  open_opts.btf_custom_path = core_btf.empty() ? nullptr : core_btf.c_str();
  Skeleton skel(eziotrace__open_opts(&open_opts));
  if (!skel) fail("cannot open the BPF object: {}", errno_text(errno));
  return skel;
}

ProgramSplit split_programs(const eziotrace* skel) {
  ProgramSplit split;
  std::vector<std::pair<size_t, size_t>> selected;  // instructions, index
  bpf_program* prog;
  bpf_object__for_each_program(prog, skel->obj) {
    if (bpf_program__autoload(prog)) {
      selected.emplace_back(bpf_program__insn_cnt(prog), split.halves.size());
    }
    split.halves.push_back(-1);
  }
  // The largest first, each to the lighter half: the halves end within a program of each other.
  std::sort(selected.rbegin(), selected.rend());
  std::array<size_t, 2>& size = split.instructions;
  for (const auto& [insns, index] : selected) {
    int half = size[1] < size[0] ? 1 : 0;
    split.halves[index] = half;
    size[half] += insns;
  }
  return split;
}

void select_no_program(eziotrace* skel) {
  bpf_program* prog;
  bpf_object__for_each_program(prog, skel->obj) {
    if (int err = bpf_program__set_autoload(prog, false)) {
      fail("cannot deselect BPF program {}: {}", bpf_program__name(prog), errno_text(-err));
    }
  }
}

HalfLoader::HalfLoader(const ProgramHalves& halves, int half, const std::string& core_btf,
                       const AttachIds& ids)
    : skel_(open_skeleton(core_btf)) {
  size_t index = 0;
  bpf_program* prog;
  bpf_object__for_each_program(prog, skel_->obj) {
    if (index >= halves.size()) fail("the BPF object's programs differ from its owner's");
    if (int err = bpf_program__set_autoload(prog, halves[index++] == half)) {
      fail("cannot select BPF program {}: {}", bpf_program__name(prog), errno_text(-err));
    }
    // The syscalls' shared bodies are reached by tail calls only (bpf/syscall_functions.bpf.h):
    // attached to their function, they would record that syscall twice.
    if (is_syscall_body(bpf_program__name(prog))) bpf_program__set_autoattach(prog, false);
  }
  attach_ids_ = std::make_unique<AttachIdsInUse>(skel_->obj, ids);
}

HalfLoader::~HalfLoader() = default;

void HalfLoader::share_tables(const eziotrace* owner) {
  const bpf_map* theirs = nullptr;
  bpf_map* mine;
  bpf_object__for_each_map(mine, skel_->obj) {
    theirs = bpf_object__next_map(owner->obj, theirs);
    // The same ELF: the same tables in the same order.
    if (!theirs || std::strcmp(bpf_map__name(mine), bpf_map__name(theirs)) != 0) {
      fail("the BPF object's tables differ from its owner's at {}", bpf_map__name(mine));
    }
    if (int err = bpf_map__reuse_fd(mine, bpf_map__fd(theirs))) {
      fail("cannot share table {}: {}", bpf_map__name(mine), errno_text(-err));
    }
  }
}

uint64_t HalfLoader::load_and_attach(bool attach_now) {
  uint64_t t0 = monotonic_ns();
  if (int err = eziotrace__load(skel_.get())) {
    fail("cannot load the BPF programs: {} (run with --verbose for the verifier log)",
         errno_text(-err));
  }
  attach_ids_.reset();  // used by the load only
  if (attach_now) attach();
  return monotonic_ns() - t0;
}

void HalfLoader::attach() {
  if (int err = eziotrace__attach(skel_.get())) {
    fail("cannot attach the BPF programs: {}", errno_text(-err));
  }
}

HalfLoaders open_halves(const ProgramHalves& halves, const std::string& core_btf,
                        const AttachIds& ids) {
  return {std::make_unique<HalfLoader>(halves, 0, core_btf, ids),
          std::make_unique<HalfLoader>(halves, 1, core_btf, ids)};
}

std::array<uint64_t, 2> load_halves(HalfLoaders& loaders, bool attach) {
  auto second = std::async(std::launch::async, [&loader = *loaders[1], attach] {
    return loader.load_and_attach(attach);
  });
  // Should this one fail, its error is the one reported; the future waits for the other.
  uint64_t first = loaders[0]->load_and_attach(attach);
  return {first, second.get()};
}

}  // namespace ezio::recorder
