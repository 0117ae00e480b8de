// SPDX-License-Identifier: GPL-2.0-only
// The node's table of unattributed block requests as a session found it at its start and left it
// at its end (its window, docs/cluster.md "Several parts of one host"): carried in eziotraced's
// totals, written on the session's device locations.
#include <gtest/gtest.h>

#include "common/otf2/reader.h"
#include "common/schema/properties.h"
#include "recorder/archive/kernel_archive.h"
#include "recorder/service/totals_json.h"
#include "run.h"

using namespace ezio;
using namespace ezio::recorder;

namespace {

constexpr uint32_t kDev = (8u << 20) | 16;

UnattributedWindow some_window() {
  return {0x1234, {{kDev, {10, 4096, 3}}}, {{kDev, {25, 9 * 4096, 5}}, {kDev + 1, {1, 512, 0}}}};
}

TEST(DeviceWindow, CarriedInEziotracedsTotals) {
  service::Totals t;
  t.devices.used = {kDev};
  t.devices.unattributed = {{kDev, {15, 8 * 4096, 2}}};
  t.devices.window = some_window();
  service::Totals back = service::totals_from_json(service::totals_to_json(t));
  EXPECT_EQ(back.devices.window.table, 0x1234u);
  ASSERT_EQ(back.devices.window.end.size(), 2u);
  EXPECT_EQ(back.devices.window.start.at(kDev).requests, 10u);
  EXPECT_EQ(back.devices.window.end.at(kDev).bytes, 9u * 4096);
  EXPECT_EQ(back.devices.window.end.at(kDev).not_issued, 5u);
  EXPECT_EQ(back.devices.unattributed.at(kDev).requests, 15u);
}

// The device's own count of completed requests, read with the table at both ends.
UnattributedWindow window_with_device_counts() {
  UnattributedWindow w = some_window();
  w.start[kDev].device = 100;
  w.start[kDev].device_bytes = 100 * 4096;
  w.start[kDev].device_read = true;
  w.end[kDev].device = 142;
  w.end[kDev].device_bytes = 142 * 4096;
  w.end[kDev].device_read = true;
  return w;
}

TEST(DeviceWindow, CarriesTheDevicesOwnCounts) {
  service::Totals t;
  t.devices.window = window_with_device_counts();
  service::Totals back = service::totals_from_json(service::totals_to_json(t));
  EXPECT_EQ(back.devices.window.start.at(kDev).device, 100u);
  EXPECT_TRUE(back.devices.window.start.at(kDev).device_read);
  EXPECT_EQ(back.devices.window.end.at(kDev).device, 142u);
  EXPECT_EQ(back.devices.window.end.at(kDev).device_bytes, 142u * 4096);
  EXPECT_FALSE(back.devices.window.end.at(kDev + 1).device_read);  // not read: not sent
}

TEST(DeviceWindow, ReadsEveryBlockDevicesCount) {
  // This machine has block devices (loop devices at least); each gets its count, whatever the
  // table holds, and a device's entry of the table keeps its values.
  std::map<uint32_t, UnattributedIo> table = {{kDev, {7, 512, 1}}};
  add_device_requests(table);
  size_t read = 0, with_bytes = 0;
  for (const auto& [dev, u] : table) {
    read += u.device_read;
    with_bytes += u.device_bytes > 0 && u.device_bytes % 512 == 0;
  }
  EXPECT_GE(read, 1u);
  EXPECT_GE(with_bytes, 1u) << "the root disk has been read: its sectors, in bytes";
  EXPECT_EQ(table.at(kDev).requests, 7u);
}

TEST(DeviceWindow, AnOlderEziotracedSendsNone) {
  auto j = service::totals_to_json({});
  j.erase("window");
  EXPECT_EQ(service::totals_from_json(j).devices.window.table, 0u);
}

std::map<std::string, uint64_t> device_properties(const std::filesystem::path& dir) {
  otf2::Archive a = otf2::read_archive(dir / "eziotrace.otf2");
  std::map<std::string, uint64_t> out;
  for (const auto& p : a.defs.location_properties) {
    auto loc = a.defs.locations.find(p.location);
    if (loc != a.defs.locations.end() && a.defs.str(loc->second.name).starts_with("block "))
      out[a.defs.str(p.name)] = p.value.uint64;
  }
  return out;
}

RecordingInfo info() {
  RecordingInfo i;
  i.root_pid = 1000;
  i.command = {"/bin/app"};
  i.start_monotonic_ns = 500;
  i.end_monotonic_ns = 100000;
  return i;
}

TEST(DeviceWindow, WrittenOnTheSessionsDeviceLocation) {
  RecordStore s;
  s.devices().used = {kDev};
  s.devices().unattributed = {{kDev, {15, 8 * 4096, 2}}};
  s.devices().window = some_window();
  auto dir = test::scratch_dir("device_window");
  write_kernel_archive(dir, s, info());
  auto p = device_properties(dir);
  EXPECT_EQ(p[schema::kUnattributedRequests], 15u);
  EXPECT_EQ(p[schema::kUnattributedTable], 0x1234u);
  EXPECT_EQ(p[schema::kUnattributedRequestsAtStart], 10u);
  EXPECT_EQ(p[schema::kUnattributedRequestsAtEnd], 25u);
  EXPECT_EQ(p[schema::kUnattributedBytesAtStart], 4096u);
  EXPECT_EQ(p[schema::kUnattributedBytesAtEnd], 9u * 4096);
  EXPECT_EQ(p[schema::kNotIssuedRequestsAtStart], 3u);
  EXPECT_EQ(p[schema::kNotIssuedRequestsAtEnd], 5u);
  EXPECT_FALSE(p.contains(schema::kDeviceRequestsAtStart));  // not read: not written
  s.devices().window = window_with_device_counts();
  auto with = test::scratch_dir("device_window_counts");
  write_kernel_archive(with, s, info());
  p = device_properties(with);
  EXPECT_EQ(p[schema::kDeviceRequestsAtStart], 100u);
  EXPECT_EQ(p[schema::kDeviceRequestsAtEnd], 142u);
  EXPECT_EQ(p[schema::kDeviceBytesAtStart], 100u * 4096);
  EXPECT_EQ(p[schema::kDeviceBytesAtEnd], 142u * 4096);
}

TEST(DeviceWindow, NoneWrittenWhenTheTableIsNotKnown) {
  RecordStore s;
  s.devices().used = {kDev};
  auto dir = test::scratch_dir("device_window_none");
  write_kernel_archive(dir, s, info());
  auto p = device_properties(dir);
  EXPECT_TRUE(p.contains(schema::kUnattributedRequests));
  EXPECT_FALSE(p.contains(schema::kUnattributedTable));
  EXPECT_FALSE(p.contains(schema::kUnattributedRequestsAtStart));
}

}  // namespace
