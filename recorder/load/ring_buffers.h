// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The sessions' ring buffers and the map of rings the programs find them in (bpf/common.bpf.h,
// session_ring), made apart from the programs: the in-process recorder makes its ring while they
// load, and the first ring is installed in the map meanwhile (KernelPrograms).
#include <cstdint>
#include <future>

#include "common/unique_fd.h"

namespace ezio::recorder {

// Fails unless the size is a power of two and a multiple of the page size.
void check_ring_buffer_size(uint64_t ring_buffer_bytes);

// A session's ring buffer of ring_bytes (BPF_MAP_TYPE_RINGBUF), independent of the programs.
UniqueFd make_ring_buffer(uint64_t ring_bytes);

// The map of rings, made here instead of by libbpf's load (bpf_map__reuse_fd), so that a ring can
// be installed in it while the programs load.
UniqueFd make_rings_map();

// Installs ring in a slot of the map of rings (the bpf() call returns after an RCU grace period).
void put_ring(int rings, unsigned slot, int ring);

// Installs the first ring in slot 0 of rings (taking that descriptor: it stays open until then).
UniqueFd install_first_ring(UniqueFd rings, std::future<UniqueFd> first_ring);

// Removing an entry of a map of maps waits for the programs running meanwhile (the bpf() call's
// synchronize_rcu): none can still be writing into the ring when this returns.
void delete_ring_entry(int rings_fd, unsigned slot);

}  // namespace ezio::recorder
