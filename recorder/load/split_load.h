// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The selected BPF programs loaded by two objects at once, on two threads. The kernel verifies one
// object's programs one after the other (docs/costs.md), and the application waits at the
// start gate meanwhile: with two cores, two objects verifying half the programs each take about
// half as long. Both are opened from the same ELF as the tables' owner (KernelPrograms' skeleton,
// which loads no program: it makes every table, the global variables' included) and take its
// tables before they load (bpf_map__reuse_fd), so a program of either reads and writes the same
// rings, tables and variables. Each attaches its programs as soon as they are loaded, unless its
// owner attaches them later (eziotraced: only while a session needs them).
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "recorder/probe/attach_ids.h"

struct eziotrace;

namespace ezio::recorder {

struct SkeletonDeleter {
  void operator()(eziotrace* s) const;
};
using Skeleton = std::unique_ptr<eziotrace, SkeletonDeleter>;

// The embedded ELF's skeleton, opened; core_btf, when not empty, is the kernel BTF for the CO-RE
// relocations.
Skeleton open_skeleton(const std::string& core_btf);

// Whether program is one of the syscalls' shared bodies, loaded but never attached.
bool is_syscall_body(const char* program);

// Per program of the object (in its order): -1 when not selected to load, else the half (0 or 1)
// that loads it. The halves have about the same number of instructions (the verifier's work).
using ProgramHalves = std::vector<int>;
struct ProgramSplit {
  ProgramHalves halves;
  std::array<size_t, 2> instructions{};  // each half's (the -v log)
};
ProgramSplit split_programs(const eziotrace* skel);

// Selects no program of skel: it makes the tables only.
void select_no_program(eziotrace* skel);

// One half: an object of the same ELF with that half's programs selected.
class HalfLoader {
 public:
  // ids: the attach points of its BTF-attached programs (recorder/probe/attach_ids.h).
  HalfLoader(const ProgramHalves& halves, int half, const std::string& core_btf,
             const AttachIds& ids);
  ~HalfLoader();
  HalfLoader(const HalfLoader&) = delete;
  HalfLoader& operator=(const HalfLoader&) = delete;

  // Before load_and_attach: every table is owner's (loaded), not one of its own.
  void share_tables(const eziotrace* owner);
  // Loads its programs, and attaches them unless told not to; fails saying which step failed.
  // Returns the time it took (ns).
  uint64_t load_and_attach(bool attach = true);
  // Attaches its loaded programs (again, after their links were destroyed: only those without one).
  void attach();
  // Its programs' links (the skeleton's), for the owner to unhook them.
  eziotrace* skeleton() const { return skel_.get(); }

 private:
  Skeleton skel_;
  std::unique_ptr<AttachIdsInUse> attach_ids_;  // while it loads
};

using HalfLoaders = std::array<std::unique_ptr<HalfLoader>, 2>;

// Both halves opened (on the calling thread).
HalfLoaders open_halves(const ProgramHalves& halves, const std::string& core_btf,
                        const AttachIds& ids);

// Loads and attaches both (or only loads them), at once: the second on a thread of its own.
// Returns each one's time.
std::array<uint64_t, 2> load_halves(HalfLoaders& loaders, bool attach = true);

}  // namespace ezio::recorder
