// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/load/ring_buffers.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <utility>

#include "common/error.h"
#include "recorder/load/kernel_source.h"
#include "rings.h"

namespace ezio::recorder {
namespace {

void put_ring_entry(int rings_map, uint32_t key, int ring) {
  if (bpf_map_update_elem(rings_map, &key, &ring, BPF_ANY) != 0) {
    fail("cannot install the session's ring buffer: {}", errno_text(errno));
  }
}

}  // namespace

void check_ring_buffer_size(uint64_t ring_buffer_bytes) {
  long page = sysconf(_SC_PAGESIZE);
  if (ring_buffer_bytes < static_cast<uint64_t>(page) ||
      (ring_buffer_bytes & (ring_buffer_bytes - 1)) != 0) {
    fail("the ring buffer size must be a power of two of at least {} bytes, not {}", page,
         ring_buffer_bytes);
  }
}

UniqueFd make_ring_buffer(uint64_t ring_bytes) {
  check_ring_buffer_size(ring_bytes);
  UniqueFd ring(bpf_map_create(BPF_MAP_TYPE_RINGBUF, "ezio_ring", 0, 0,
                               static_cast<uint32_t>(ring_bytes), nullptr));
  if (!ring) fail("cannot create a ring buffer of {} bytes: {}", ring_bytes, errno_text(errno));
  return ring;
}

RingLayout ring_layout(uint64_t total_bytes, unsigned cpus) {
  check_ring_buffer_size(total_bytes);
  uint64_t most = std::max<uint64_t>(1, total_bytes / kMinRingPerCpu);
  uint64_t count = std::min<uint64_t>({std::max(cpus, 1u), EZIO_MAX_RINGS, most});
  uint64_t bytes = std::bit_floor(total_bytes / count);
  long page = sysconf(_SC_PAGESIZE);
  if (bytes < static_cast<uint64_t>(page)) return {1, total_bytes};
  return {static_cast<unsigned>(count), bytes};
}

unsigned online_cpus() {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<unsigned>(n) : 1;
}

RingSet make_ring_set(uint64_t total_bytes) {
  RingLayout l = ring_layout(total_bytes, online_cpus());
  RingSet set;
  set.ring_bytes = l.ring_bytes;
  for (unsigned r = 0; r < l.count; ++r) set.rings.push_back(make_ring_buffer(l.ring_bytes));
  return set;
}

UniqueFd make_rings_map() {
  UniqueFd tmpl(bpf_map_create(BPF_MAP_TYPE_RINGBUF, "ezio_ring", 0, 0, 4096, nullptr));
  if (!tmpl) fail("cannot create a ring buffer template: {}", errno_text(errno));
  LIBBPF_OPTS(bpf_map_create_opts, opts, .inner_map_fd = static_cast<__u32>(tmpl.get()));
  UniqueFd rings(bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, "rings", sizeof(uint32_t),
                                sizeof(uint32_t), kMaxSessions * EZIO_MAX_RINGS, &opts));
  if (!rings) fail("cannot create the map of ring buffers: {}", errno_text(errno));
  return rings;
}

void put_rings(int rings_map, unsigned slot, const std::vector<UniqueFd>& rings) {
  if (rings.empty() || rings.size() > EZIO_MAX_RINGS)
    fail("{} rings for one session", rings.size());
  std::vector<std::future<void>> installs;
  for (size_t r = 1; r < rings.size(); ++r) {
    installs.push_back(std::async(std::launch::async, put_ring_entry, rings_map,
                                  slot * EZIO_MAX_RINGS + static_cast<unsigned>(r),
                                  rings[r].get()));
  }
  put_ring_entry(rings_map, slot * EZIO_MAX_RINGS, rings[0].get());
  for (auto& i : installs) i.get();  // rethrows what failed
}

RingSet install_first_rings(UniqueFd rings, std::future<RingSet> first) {
  RingSet set = first.get();
  put_rings(rings.get(), 0, set.rings);
  return set;
}

void delete_ring_entries(int rings_fd, unsigned slot, unsigned count) {
  for (unsigned r = 0; r < count; ++r) {
    uint32_t key = slot * EZIO_MAX_RINGS + r;
    if (bpf_map_delete_elem(rings_fd, &key) != 0 && errno != ENOENT) {
      fail("cannot remove the session's ring buffer: {}", errno_text(errno));
    }
  }
}

}  // namespace ezio::recorder
