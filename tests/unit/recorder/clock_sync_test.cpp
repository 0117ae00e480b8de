// SPDX-License-Identifier: GPL-2.0-only
// The ping-pong estimator and the drift map of recorder/core/clock_sync.h on made-up samples.
#include "recorder/core/clock_sync.h"

#include <gtest/gtest.h>

#include <vector>

#include "common/error.h"
#include "converters/clock_reference.h"

namespace ezio::recorder {
namespace {

// A server whose clock is the client's + offset; each round's two legs take `out` and `back`.
ClockSample round_at(int64_t t0, int64_t offset, int64_t out, int64_t back) {
  return {t0, t0 + out + offset, t0 + out + back};
}

TEST(ClockSync, ShortestRoundGivesTheOffsetAndHalfItsRoundTripAsError) {
  const int64_t offset = 7'000'000'123;
  std::vector<ClockSample> s = {round_at(1000, offset, 900, 100), round_at(5000, offset, 30, 30),
                                round_at(9000, offset, 400, 600)};
  const auto o = estimate_offset(s);
  EXPECT_EQ(o.offset_ns, offset);
  EXPECT_EQ(o.error_ns, 30);
  EXPECT_EQ(o.rtt_min_ns, 60);
  EXPECT_EQ(o.rtt_median_ns, 1000);
  EXPECT_EQ(o.rounds, 3u);
  EXPECT_EQ(o.at_ns, 5030);
}

TEST(ClockSync, AsymmetricPathStaysWithinTheErrorBound) {
  const int64_t offset = -3'000'000;
  std::vector<ClockSample> s = {round_at(0, offset, 90, 10)};
  const auto o = estimate_offset(s);
  EXPECT_LE(std::llabs(o.offset_ns - offset), o.error_ns);
  EXPECT_NE(o.offset_ns, offset);
}

TEST(ClockSync, NoSampleOrAReversedOneIsRefused) {
  EXPECT_THROW(estimate_offset({}), Error);
  std::vector<ClockSample> bad = {{100, 5, 50}};
  EXPECT_THROW(estimate_offset(bad), Error);
}

TEST(ClockSync, TwoMeasurementsCorrectDriftLinearly) {
  ClockMap m;
  m.start = {.offset_ns = 1'000'000, .error_ns = 40, .at_ns = 0};
  // 10 ppm: 10 us more after one second.
  m.end = {.offset_ns = 1'010'000, .error_ns = 25, .at_ns = 1'000'000'000};
  EXPECT_NEAR(m.drift_ppm(), 10.0, 1e-9);
  EXPECT_EQ(m.server_time(500'000'000), 500'000'000 + 1'005'000);
  EXPECT_NEAR(double(m.client_time(m.server_time(700'000'000))), 700'000'000.0, 1.0);
  EXPECT_EQ(m.error_ns(), 40);
}

TEST(ClockSync, OneMeasurementIsAConstantShift) {
  ClockMap m;
  m.start = m.end = {.offset_ns = -42, .error_ns = 5, .at_ns = 100};
  EXPECT_EQ(m.server_time(1'000), 958);
  EXPECT_EQ(m.client_time(958), 1'000);
  EXPECT_EQ(m.drift_ppm(), 0.0);
}

TEST(ClockSync, ClockReferenceIsHostAndOptionalPort) {
  using converters::parse_clock_ref;
  EXPECT_EQ(parse_clock_ref("node1"), std::make_pair(std::string("node1"), uint16_t(7471)));
  EXPECT_EQ(parse_clock_ref("node1:7472"), std::make_pair(std::string("node1"), uint16_t(7472)));
  for (const char* bad : {"node1:", "node1:x", "node1:0", "node1:70000", ":7472", ""})
    EXPECT_THROW(parse_clock_ref(bad), Error) << bad;
}

}  // namespace
}  // namespace ezio::recorder
