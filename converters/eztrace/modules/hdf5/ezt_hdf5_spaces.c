// SPDX-License-Identifier: GPL-2.0-only
// The points selected in the program's dataspaces, kept between transfers: asking HDF5
// (H5Sget_select_npoints) on every H5Dread/H5Dwrite goes through its API entry, the largest part
// of a small transfer's description (docs/costs.md). Every public function that changes a
// dataspace's selection or extent in place is wrapped and forgets the space; the others make new
// ids, and HDF5 never gives an id again, so a kept count is the space's as long as it is kept.
#include <stdatomic.h>

#include "ezt_hdf5.h"

// Direct-mapped by id. Each slot is a sequence lock: odd while being written, so that a reader
// never takes one space's count for another's.
enum { kSlots = 256 };
struct slot {
  atomic_uint seq;
  _Atomic hid_t id;
  _Atomic uint64_t points;
};
static struct slot slots[kSlots];

static struct slot* slot_of(hid_t space) {
  uint64_t h = (uint64_t)space * 0x9e3779b97f4a7c15ull;
  return &slots[h >> 56];
}

static int found(struct slot* s, hid_t space, uint64_t* points) {
  unsigned before = atomic_load_explicit(&s->seq, memory_order_acquire);
  if (before & 1u) return 0;
  hid_t id = atomic_load_explicit(&s->id, memory_order_relaxed);
  uint64_t n = atomic_load_explicit(&s->points, memory_order_relaxed);
  atomic_thread_fence(memory_order_acquire);
  if (atomic_load_explicit(&s->seq, memory_order_relaxed) != before || id != space) return 0;
  *points = n;
  return 1;
}

// Writes the slot; `wait`: until it is free (a change must not be lost), else gives up at once.
static void store(struct slot* s, hid_t id, uint64_t points, int wait) {
  unsigned seq = atomic_load_explicit(&s->seq, memory_order_relaxed);
  for (;;) {
    if (!(seq & 1u) && atomic_compare_exchange_weak_explicit(
                           &s->seq, &seq, seq + 1, memory_order_acquire, memory_order_relaxed))
      break;
    if (!wait) return;
    seq = atomic_load_explicit(&s->seq, memory_order_relaxed);
  }
  atomic_store_explicit(&s->id, id, memory_order_relaxed);
  atomic_store_explicit(&s->points, points, memory_order_relaxed);
  atomic_store_explicit(&s->seq, seq + 2, memory_order_release);
}

uint64_t hdf5_space_points(hid_t space) {
  struct slot* s = slot_of(space);
  uint64_t n;
  if (found(s, space, &n)) return n;
  const struct hdf5_api* h5 = hdf5_api();
  hssize_t got = h5->Sget_select_npoints ? h5->Sget_select_npoints(space) : -1;
  n = got > 0 ? (uint64_t)got : 0;
  if (got >= 0) store(s, space, n, 0);
  return n;
}

static void forget(hid_t space) {
  struct slot* s = slot_of(space);
  if (atomic_load_explicit(&s->id, memory_order_relaxed) == space) store(s, 0, 0, 1);
}

// The wrappers: the change is made, then the count forgotten (a transfer on another thread
// between the two is the program's own race on the space).
#define FORGETS(NAME, SPACE, PARAMS, ARGS) \
  herr_t NAME PARAMS {                     \
    HDF5_REAL(NAME);                       \
    herr_t rc = real_##NAME ARGS;          \
    forget(SPACE);                         \
    return rc;                             \
  }

FORGETS(H5Sselect_hyperslab, space_id,
        (hid_t space_id, H5S_seloper_t op, const hsize_t start[], const hsize_t stride[],
         const hsize_t count[], const hsize_t block[]),
        (space_id, op, start, stride, count, block))
FORGETS(H5Sselect_elements, space_id,
        (hid_t space_id, H5S_seloper_t op, size_t num_elem, const hsize_t* coord),
        (space_id, op, num_elem, coord))
FORGETS(H5Sselect_all, space_id, (hid_t space_id), (space_id))
FORGETS(H5Sselect_none, space_id, (hid_t space_id), (space_id))
FORGETS(H5Sset_extent_simple, space_id,
        (hid_t space_id, int rank, const hsize_t dims[], const hsize_t max[]),
        (space_id, rank, dims, max))
FORGETS(H5Sset_extent_none, space_id, (hid_t space_id), (space_id))
FORGETS(H5Sextent_copy, dst_id, (hid_t dst_id, hid_t src_id), (dst_id, src_id))
FORGETS(H5Sclose, space_id, (hid_t space_id), (space_id))
#if H5_VERSION_GE(1, 10, 7)
FORGETS(H5Smodify_select, space1_id, (hid_t space1_id, H5S_seloper_t op, hid_t space2_id),
        (space1_id, op, space2_id))
FORGETS(H5Sselect_copy, dst_id, (hid_t dst_id, hid_t src_id), (dst_id, src_id))
#endif
