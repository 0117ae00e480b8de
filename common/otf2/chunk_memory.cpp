// SPDX-License-Identifier: GPL-2.0-only
#include "common/otf2/chunk_memory.h"

#include <malloc.h>
#include <sys/mman.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <mutex>

namespace ezio::otf2 {
namespace {

constexpr size_t kMiB = 1024 * 1024;
constexpr uintptr_t kHugePage = 2 * kMiB;
// Room for the chunks a merge keeps at once: an EZTrace archive's definition and event readers
// (16 MiB each), the kernel archive's (4 and 1 MiB), the writer's (1 MiB per location).
constexpr size_t kBlock = 8 * kMiB;
constexpr size_t kBlocks = 12;

// Grows the heap by kBlocks * kBlock without touching it, asks for transparent huge pages on that
// range, and gives it back to malloc, which keeps it (trim threshold) for the chunks to come.
void reserve_huge_page_heap() {
  std::array<void*, kBlocks> blocks{};
  for (void*& b : blocks) b = std::malloc(kBlock);
  uintptr_t lo = UINTPTR_MAX, hi = 0;
  for (void* b : blocks) {
    if (!b) continue;
    auto p = reinterpret_cast<uintptr_t>(b);
    lo = std::min(lo, p);
    hi = std::max(hi, p + kBlock);
  }
  lo = (lo + kHugePage - 1) & ~(kHugePage - 1);
  hi &= ~(kHugePage - 1);
  // Advice only: without it (THP off) the chunks are faulted in 4 KiB pages as before.
  if (lo < hi) (void)madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_HUGEPAGE);
  for (void* b : blocks) std::free(b);
}

}  // namespace

// OTF2 zeroes a whole chunk for every definition or event reader it opens (16 MiB for EZTrace's
// archives), and a writer's chunk from its end of data to its end when flushing it (4 MiB per
// location's definitions). glibc serves such sizes with a fresh mmap each, so the zeroing faults
// them in 4 KiB at a time, and unmaps them on close: 16 k page faults, a third of the CPU time of a
// merge of a small recording. Served from a heap range advised for transparent huge pages and kept
// by malloc between readers, they fault in 2 MiB at a time, once. The archives read and written are
// the same.
// A small recording pays little for it (a few huge pages, and fewer small faults); advised only
// past a first part of the range, it would take as much CPU as without the advice at all, which
// measured the same or slightly more (docs/costs.md).
void prepare_chunk_memory() {
  static std::once_flag once;
  std::call_once(once, [] {
    (void)mallopt(M_MMAP_THRESHOLD, static_cast<int>(32 * kMiB));  // glibc's largest
    (void)mallopt(M_TRIM_THRESHOLD, static_cast<int>(256 * kMiB));
    reserve_huge_page_heap();
  });
}

}  // namespace ezio::otf2
