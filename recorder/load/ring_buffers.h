// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The sessions' ring buffers and the map of rings the programs find them in (bpf/common.bpf.h,
// session_ring), made apart from the programs: the in-process recorder makes its ring while they
// load, and the first ring is installed in the map meanwhile (KernelPrograms).
#include <cstdint>
#include <future>
#include <vector>

#include "common/unique_fd.h"

namespace ezio::recorder {

// Fails unless the size is a power of two and a multiple of the page size.
void check_ring_buffer_size(uint64_t ring_buffer_bytes);

// A session's ring buffer of ring_bytes (BPF_MAP_TYPE_RINGBUF), independent of the programs.
UniqueFd make_ring_buffer(uint64_t ring_bytes);

// Rings of a session smaller than this are not worth one CPU's own ring: a burst of one thread
// (which writes into one ring) would find less room than a shared ring gave it.
constexpr uint64_t kMinRingPerCpu = uint64_t{1} << 20;

// A session's rings: records written on CPU c go to rings[c % rings.size()] (bpf/common.bpf.h,
// ring_entry). Each is ring_bytes.
struct RingSet {
  std::vector<UniqueFd> rings;
  uint64_t ring_bytes = 0;
};

// How many rings of how many bytes a session asking total_bytes gets on cpus CPUs: one per CPU
// (at most EZIO_MAX_RINGS, a power of two) of total / count each (rounded down to a power of
// two), but none smaller than kMinRingPerCpu: never more memory than asked.
struct RingLayout {
  unsigned count = 1;
  uint64_t ring_bytes = 0;
};
RingLayout ring_layout(uint64_t total_bytes, unsigned cpus);
// The CPUs the layout counts: those online (the ring of an offline CPU would stay empty).
unsigned online_cpus();

// The rings of ring_layout(total_bytes, online_cpus()).
RingSet make_ring_set(uint64_t total_bytes);

// The map of rings, made here instead of by libbpf's load (bpf_map__reuse_fd), so that a ring can
// be installed in it while the programs load.
UniqueFd make_rings_map();

// Installs the slot's rings in the map of rings (entries slot * EZIO_MAX_RINGS + r). Each bpf()
// call returns after an RCU grace period: the rings are installed at once, on threads of their
// own, so that the waits overlap.
void put_rings(int rings_map, unsigned slot, const std::vector<UniqueFd>& rings);

// Installs the first session's rings in slot 0 of rings (taking that descriptor: it stays open
// until then).
RingSet install_first_rings(UniqueFd rings, std::future<RingSet> first);

// Removing an entry of a map of maps waits for the programs running meanwhile (the bpf() call's
// synchronize_rcu): none can still be writing into the slot's `count` rings when this returns.
void delete_ring_entries(int rings_fd, unsigned slot, unsigned count);

}  // namespace ezio::recorder
