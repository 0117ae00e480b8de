// SPDX-License-Identifier: GPL-2.0-only
// The merge's event store (converters/merge/event_store.h): what is appended comes back exactly,
// whatever the kinds, fields, attribute types and record sizes, from a file nobody else sees.
#include "converters/merge/event_store.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <map>
#include <vector>

#include "common/error.h"
#include "run.h"

namespace {

using ezio::converters::EventStore;
using ezio::otf2::Attribute;
using ezio::otf2::Event;
using ezio::otf2::EventKind;

// An attribute whose union holds only its type's member (the rest 0), as the store gives back.
Attribute attribute(uint32_t id, OTF2_Type type, uint64_t bits) {
  Attribute a{id, type, {}};
  a.value.uint64 = 0;
  switch (type) {
    case OTF2_TYPE_UINT8:
    case OTF2_TYPE_INT8:
      a.value.uint8 = static_cast<uint8_t>(bits);
      break;
    case OTF2_TYPE_UINT16:
    case OTF2_TYPE_INT16:
      a.value.uint16 = static_cast<uint16_t>(bits);
      break;
    case OTF2_TYPE_UINT64:
    case OTF2_TYPE_INT64:
    case OTF2_TYPE_DOUBLE:
    case OTF2_TYPE_LOCATION:
      a.value.uint64 = bits;
      break;
    default:
      a.value.uint32 = static_cast<uint32_t>(bits);
      break;
  }
  return a;
}

void expect_same(const Event& want, const Event& got, size_t i) {
  EXPECT_EQ(want.kind, got.kind) << i;
  EXPECT_EQ(want.time, got.time) << i;
  EXPECT_EQ(want.ref, got.ref) << i;
  EXPECT_EQ(want.ref2, got.ref2) << i;
  EXPECT_EQ(want.a, got.a) << i;
  EXPECT_EQ(want.b, got.b) << i;
  EXPECT_EQ(want.f1, got.f1) << i;
  EXPECT_EQ(want.f2, got.f2) << i;
  EXPECT_EQ(want.f3, got.f3) << i;
  ASSERT_EQ(want.attributes.size(), got.attributes.size()) << i;
  for (size_t k = 0; k < want.attributes.size(); ++k) {
    EXPECT_EQ(want.attributes[k].id, got.attributes[k].id) << i;
    EXPECT_EQ(want.attributes[k].type, got.attributes[k].type) << i;
    EXPECT_EQ(want.attributes[k].value.uint64, got.attributes[k].value.uint64) << i << " " << k;
  }
  ASSERT_EQ(want.metric_types, got.metric_types) << i;
  for (size_t k = 0; k < want.metric_values.size(); ++k) {
    EXPECT_EQ(want.metric_values[k].unsigned_int, got.metric_values[k].unsigned_int) << i;
  }
}

std::vector<Event> read_back(const EventStore& store, OTF2_LocationRef loc) {
  std::vector<Event> out;
  EventStore::Cursor cursor(store, loc);
  while (const Event* e = cursor.next()) out.push_back(*e);
  return out;
}

void store_location(EventStore& store, OTF2_LocationRef loc, const std::vector<Event>& events) {
  store.begin_location(loc);
  for (const Event& e : events) store.append(e);
  store.end_location();
}

// Every kind, extreme field values, times that go back, every attribute type, metric values.
std::vector<Event> varied_events() {
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  std::vector<Event> events;
  uint64_t time = 1'000'000'000'000;
  for (int k = 0; k <= static_cast<int>(EventKind::MpiCollectiveEnd); ++k) {
    Event e{};
    e.kind = static_cast<EventKind>(k);
    e.time = k % 3 == 2 ? time - 17 : (time += 1000 * k);  // some go back in time
    e.ref = static_cast<uint32_t>(k);
    e.ref2 = k % 2 ? std::numeric_limits<uint32_t>::max() : 0;
    e.a = k % 4 == 1 ? kMax : uint64_t(k) << 40;
    e.b = k % 5 == 0 ? 0 : kMax - k;
    e.f1 = 0xffffffffu - k;
    e.f2 = k;
    e.f3 = k % 2;
    events.push_back(e);
  }
  Event enter{};
  enter.kind = EventKind::Enter;
  enter.time = 5;  // far before the others
  enter.ref = 70000;
  const uint64_t minus_one = kMax;
  float f = -1.5f;
  uint32_t fbits;
  std::memcpy(&fbits, &f, 4);
  double d = 3.25e-300;
  uint64_t dbits;
  std::memcpy(&dbits, &d, 8);
  enter.attributes = {
      attribute(0, OTF2_TYPE_UINT8, 255),       attribute(1, OTF2_TYPE_INT8, 0x80),
      attribute(2, OTF2_TYPE_UINT16, 65535),    attribute(3, OTF2_TYPE_INT32, minus_one),
      attribute(4, OTF2_TYPE_INT64, minus_one), attribute(5, OTF2_TYPE_UINT64, kMax),
      attribute(6, OTF2_TYPE_FLOAT, fbits),     attribute(7, OTF2_TYPE_DOUBLE, dbits),
      attribute(8, OTF2_TYPE_STRING, 123456),   attribute(9, OTF2_TYPE_LOCATION, kMax - 1),
      attribute(300000, OTF2_TYPE_IO_HANDLE, 0)};
  events.push_back(enter);
  Event metric{};
  metric.kind = EventKind::Metric;
  metric.time = 6;
  metric.ref = 2;
  metric.metric_types = {OTF2_TYPE_UINT64, OTF2_TYPE_INT64, OTF2_TYPE_DOUBLE};
  OTF2_MetricValue v1, v2, v3;
  v1.unsigned_int = kMax;
  v2.signed_int = -7;
  v3.floating_point = 0.5;
  metric.metric_values = {v1, v2, v3};
  events.push_back(metric);
  return events;
}

TEST(EventStore, EveryKindFieldAndAttributeTypeComesBackAsAppended) {
  EventStore store(ezio::test::scratch_dir("event_store_varied"));
  const std::vector<Event> events = varied_events();
  store_location(store, 7, events);
  std::vector<Event> back = read_back(store, 7);
  ASSERT_EQ(back.size(), events.size());
  for (size_t i = 0; i < events.size(); ++i) expect_same(events[i], back[i], i);
  EXPECT_EQ(store.locations().at(7).events, events.size());
}

TEST(EventStore, LocationsAreReadApartAndInAnyOrder) {
  EventStore store(ezio::test::scratch_dir("event_store_locations"));
  std::vector<Event> first = varied_events(), second;
  for (uint64_t i = 0; i < 100000; ++i) {  // several write and read buffers
    Event e{};
    e.kind = i % 2 ? EventKind::Leave : EventKind::Enter;
    e.time = 1'700'000'000'000'000'000 + i * 333;
    e.ref = static_cast<uint32_t>(i % 40);
    e.attributes = {attribute(4, OTF2_TYPE_UINT64, i * 0x10001)};
    second.push_back(e);
  }
  store_location(store, 9, first);
  store_location(store, 2, second);
  store_location(store, 4, {});  // a location without events is stored, empty
  std::vector<Event> back2 = read_back(store, 2);
  ASSERT_EQ(back2.size(), second.size());
  for (size_t i = 0; i < second.size(); i += 997) expect_same(second[i], back2[i], i);
  expect_same(second.back(), back2.back(), second.size() - 1);
  std::vector<Event> back9 = read_back(store, 9);
  ASSERT_EQ(back9.size(), first.size());
  for (size_t i = 0; i < first.size(); ++i) expect_same(first[i], back9[i], i);
  EXPECT_TRUE(read_back(store, 4).empty());
  EXPECT_TRUE(read_back(store, 5).empty());  // never stored
  EXPECT_EQ(store.locations().size(), 3u);
  EXPECT_EQ(store.locations().begin()->first, 2u);  // in id order
}

TEST(EventStore, RecordsLargerThanItsBuffersComeBackWhole) {
  EventStore store(ezio::test::scratch_dir("event_store_large"));
  Event small{};
  small.kind = EventKind::Leave;
  small.time = 10;
  Event large = small;
  large.kind = EventKind::Enter;
  for (uint32_t i = 0; i < 200000; ++i) {  // ~2 MB: more than the 1 MiB write buffer
    large.attributes.push_back(attribute(i, OTF2_TYPE_UINT64, uint64_t(i) << 35));
  }
  store_location(store, 1, {small, large, small, large, small});
  std::vector<Event> back = read_back(store, 1);
  ASSERT_EQ(back.size(), 5u);
  expect_same(small, back[0], 0);
  expect_same(large, back[1], 1);
  expect_same(small, back[2], 2);
  expect_same(large, back[3], 3);
  expect_same(small, back[4], 4);
}

// Filled from a tap (a recording being written): locations interleaved, each location's events
// come back in their order, across the parts written whenever 1 MiB is buffered.
TEST(EventStore, TappedLocationsComeBackApartAcrossParts) {
  EventStore store(ezio::test::scratch_dir("event_store_tapped"));
  std::map<OTF2_LocationRef, std::vector<Event>> sent;
  const std::vector<Event> varied = varied_events();
  for (uint64_t i = 0; i < 150000; ++i) {  // ~3 MB: several parts per location
    OTF2_LocationRef loc = i % 7 == 0 ? 11 : (i % 3 == 0 ? 5 : 8);
    Event e{};
    e.kind = i % 2 ? EventKind::Leave : EventKind::Enter;
    e.time = 1'700'000'000'000'000'000 + i * 97;
    e.ref = static_cast<uint32_t>(i % 40);
    e.attributes = {attribute(4, OTF2_TYPE_UINT64, i * 0x10001)};
    if (i % 5000 == 0) e = varied[i / 5000 % varied.size()];
    store.event(loc, e);
    sent[loc].push_back(e);
  }
  store.seal();
  ASSERT_EQ(store.locations().size(), 3u);
  for (const auto& [loc, events] : sent) {
    EXPECT_GT(store.locations().at(loc).parts.size(), 1u) << loc;
    EXPECT_EQ(store.locations().at(loc).events, events.size());
    std::vector<Event> back = read_back(store, loc);
    ASSERT_EQ(back.size(), events.size()) << loc;
    for (size_t i = 0; i < events.size(); ++i) expect_same(events[i], back[i], i);
  }
  EXPECT_THROW(store.begin_location(5), ezio::Error);  // stored already
}

TEST(EventStore, LeavesNoFileBehindAndRefusesALocationTwice) {
  auto dir = ezio::test::scratch_dir("event_store_file");
  {
    EventStore store(dir);
    store_location(store, 3, varied_events());
    EXPECT_TRUE(std::filesystem::is_empty(dir)) << "the store's file is unlinked";
    EXPECT_THROW(store.begin_location(3), ezio::Error);
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir));
}

}  // namespace
