// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/load/ring_buffers.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <unistd.h>

#include <cerrno>

#include "common/error.h"
#include "recorder/load/kernel_source.h"

namespace ezio::recorder {

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

UniqueFd make_rings_map() {
  UniqueFd tmpl(bpf_map_create(BPF_MAP_TYPE_RINGBUF, "ezio_ring", 0, 0, 4096, nullptr));
  if (!tmpl) fail("cannot create a ring buffer template: {}", errno_text(errno));
  LIBBPF_OPTS(bpf_map_create_opts, opts, .inner_map_fd = static_cast<__u32>(tmpl.get()));
  UniqueFd rings(bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, "rings", sizeof(uint32_t),
                                sizeof(uint32_t), kMaxSessions, &opts));
  if (!rings) fail("cannot create the map of ring buffers: {}", errno_text(errno));
  return rings;
}

void put_ring(int rings, unsigned slot, int ring) {
  uint32_t key = slot;
  if (bpf_map_update_elem(rings, &key, &ring, BPF_ANY) != 0) {
    fail("cannot install the session's ring buffer: {}", errno_text(errno));
  }
}

UniqueFd install_first_ring(UniqueFd rings, std::future<UniqueFd> first_ring) {
  UniqueFd ring = first_ring.get();
  put_ring(rings.get(), 0, ring.get());
  return ring;
}

void delete_ring_entry(int rings_fd, unsigned slot) {
  uint32_t key = slot;
  if (bpf_map_delete_elem(rings_fd, &key) != 0 && errno != ENOENT) {
    fail("cannot remove the session's ring buffer: {}", errno_text(errno));
  }
}

}  // namespace ezio::recorder
