// SPDX-License-Identifier: GPL-2.0-only
// The rings per CPU (recorder/load/ring_buffers.h, ring_layout; docs/costs.md, Rings per CPU) and
// the store's frontier over several rings (recorder/decode/record_store.h, newest): what the
// archive may write without a record of a migrating thread arriving later than a batch it
// belongs before.
#include <gtest/gtest.h>

#include "recorder/decode/record_store.h"
#include "recorder/load/ring_buffers.h"

using ezio::recorder::RecordStore;
using ezio::recorder::ring_layout;

namespace {

constexpr uint64_t kMiB = 1 << 20;

void add_call(RecordStore& s, uint64_t t_exit) {
  ezio_syscall_rec r{};
  r.h = {EZIO_RECORD_VERSION, EZIO_REC_SYSCALL, EZIO_LAYER_SYSCALL, sizeof(r), 100, 101};
  r.t_enter = t_exit - 1;
  r.t_exit = t_exit;
  s.add(&r, sizeof(r));
}

}  // namespace

TEST(RingLayout, OneRingPerCpuWithinTheTotal) {
  auto two = ring_layout(32 * kMiB, 2);
  EXPECT_EQ(two.count, 2u);
  EXPECT_EQ(two.ring_bytes, 16 * kMiB);
  auto six = ring_layout(32 * kMiB, 6);  // not a power of two: each rounded down
  EXPECT_EQ(six.count, 6u);
  EXPECT_EQ(six.ring_bytes, 4 * kMiB);
  auto one = ring_layout(32 * kMiB, 1);
  EXPECT_EQ(one.count, 1u);
  EXPECT_EQ(one.ring_bytes, 32 * kMiB);
}

TEST(RingLayout, NoRingUnderOneMibAndAtMostTheMaximum) {
  auto many = ring_layout(32 * kMiB, 128);
  EXPECT_EQ(many.count, 32u);
  EXPECT_EQ(many.ring_bytes, kMiB);
  auto big = ring_layout(1024 * kMiB, 512);
  EXPECT_EQ(big.count, 128u);
  EXPECT_EQ(big.ring_bytes, 8 * kMiB);
  auto small = ring_layout(256 * 1024, 8);  // below 1 MiB: one ring of what was asked
  EXPECT_EQ(small.count, 1u);
  EXPECT_EQ(small.ring_bytes, 256u * 1024);
  EXPECT_THROW(ring_layout(3 * kMiB, 2), std::exception);
}

TEST(RecordStoreRings, OneRingFrontierIsTheNewestEnd) {
  RecordStore s;
  add_call(s, 500);
  add_call(s, 400);
  EXPECT_EQ(s.newest(), 500u);
}

TEST(RecordStoreRings, FrontierIsTheSlowestRings) {
  RecordStore s;
  s.from_ring(1);
  s.from_ring(0);
  add_call(s, 1000);  // ring 0 far ahead
  EXPECT_EQ(s.newest(), 0u) << "ring 1 not read yet holds everything back";
  s.from_ring(1);
  add_call(s, 300);
  EXPECT_EQ(s.newest(), 300u);
  s.ring_emptied(1, 700);  // found empty at 700: nothing older can still come from it
  EXPECT_EQ(s.newest(), 700u);
  s.ring_emptied(0, 600);  // ring 0's latest end (1000) is later than its emptiness
  EXPECT_EQ(s.newest(), 700u);
  s.ring_emptied(1, 2000);
  EXPECT_EQ(s.newest(), 1000u);
}
