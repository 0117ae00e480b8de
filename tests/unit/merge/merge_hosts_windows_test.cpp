// SPDX-License-Identifier: GPL-2.0-only
// A host's unattributed and not-issued block requests from several parts of it (several tasks of
// one step on a node, docs/cluster.md "Several parts of one host"): the union of the sessions'
// windows of the node's table, whatever their overlaps; a part recorded before the windows were
// written counts as its own counts, the largest taken. Both merge paths (assembly, rewrite).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "common/otf2/event_writer.h"
#include "common/otf2/reader.h"
#include "common/otf2/writer.h"
#include "common/schema/properties.h"
#include "converters/hosts/device_windows.h"
#include "converters/hosts/merge_hosts.h"
#include "host_clock_file.h"
#include "run.h"

namespace ezio {
namespace {

namespace fs = std::filesystem;
using converters::DeviceCounts;
using converters::DeviceWindow;
using otf2::Ref;

constexpr uint64_t kTable = 0xfeed;

// A session whose window of table `table` read `start` requests at its start and `end` at its end
// (bytes 512 times those, not-issued flushes half of them).
DeviceWindow window(uint64_t start, uint64_t end, uint64_t table = kTable) {
  const uint64_t n = end - start;
  return {"part",
          {n, 512 * n, n / 2},
          table,
          {start, 512 * start, start / 2},
          {end, 512 * end, end / 2}};
}

DeviceCounts counts(const std::vector<DeviceWindow>& parts) {
  std::string rule;
  return converters::host_device_counts(parts, rule);
}

TEST(HostDeviceWindows, UnionOfRanges) {
  EXPECT_EQ(converters::union_length({}), 0u);
  EXPECT_EQ(converters::union_length({{10, 20}, {15, 30}}), 20u);  // overlapping
  EXPECT_EQ(converters::union_length({{30, 40}, {10, 20}}), 20u);  // apart: summed
  EXPECT_EQ(converters::union_length({{10, 40}, {15, 20}}), 30u);  // nested
  EXPECT_EQ(converters::union_length({{10, 20}, {20, 30}}), 20u);  // touching
  EXPECT_EQ(converters::union_length({{10, 10}, {5, 3}}), 0u);     // empty ranges
}

TEST(HostDeviceWindows, OverlappingWindowsCountTheirUnion) {
  // 0..14 seen by the first session, 8..23 by the second: 23 in all (the largest alone: 15).
  EXPECT_EQ(counts({window(0, 15), window(8, 23)}), (DeviceCounts{23, 23 * 512, 11}));
}

TEST(HostDeviceWindows, DisjointWindowsAreSummed) {
  EXPECT_EQ(counts({window(100, 107), window(120, 126)}), (DeviceCounts{13, 13 * 512, 3 + 3}));
}

TEST(HostDeviceWindows, NestedWindowsCountTheOuter) {
  EXPECT_EQ(counts({window(4, 40), window(10, 20), window(30, 31)}),
            (DeviceCounts{36, 36 * 512, 18}));
}

TEST(HostDeviceWindows, PartWithoutWindowKeepsTheLargestRule) {
  DeviceWindow old{"old", {30, 30 * 512, 20}, 0, {}, {}};
  std::string rule;
  // The union of the windowed parts is 23; the old part's own 30 requests are more.
  EXPECT_EQ(converters::host_device_counts({window(0, 15), window(8, 23), old}, rule),
            (DeviceCounts{30, 30 * 512, 20}));
  EXPECT_NE(rule.find("old"), std::string::npos) << rule;  // named in the verbose output
  old.counts = {5, 5 * 512, 1};
  EXPECT_EQ(counts({window(0, 15), window(8, 23), old}), (DeviceCounts{23, 23 * 512, 11}));
}

TEST(HostDeviceWindows, GapsBetweenWindowsAreWhatNoSessionSaw) {
  // 107..120 of the requests, 53..60 of the not-issued flushes: counted by the table while no
  // session was open.
  EXPECT_EQ(converters::host_device_gaps({window(100, 107), window(120, 126)}),
            (DeviceCounts{13, 13 * 512, 7}));
  EXPECT_EQ(converters::host_device_gaps({window(0, 15), window(8, 23)}), (DeviceCounts{}));
  EXPECT_EQ(converters::host_device_gaps({window(4, 40), window(10, 20)}), (DeviceCounts{}));
  EXPECT_EQ(converters::host_device_gaps({window(10, 20), window(20, 30)}), (DeviceCounts{}));
  // Three sessions, two gaps (20..25, 30..40), one session nested in the last.
  EXPECT_EQ(converters::host_device_gaps(
                {window(40, 50), window(10, 20), window(25, 30), window(42, 44)})[0],
            15u);
  // Windows of two tables: each table's own gaps, never a gap between the tables.
  EXPECT_EQ(converters::host_device_gaps({window(0, 10), window(1000, 1010, kTable + 1),
                                          window(12, 20), window(1015, 1020, kTable + 1)})[0],
            2u + 5);
  // A part without a window has no span.
  DeviceWindow old{"old", {30, 30 * 512, 20}, 0, {}, {}};
  EXPECT_EQ(converters::host_device_gaps({window(10, 20), old}), (DeviceCounts{}));
}

TEST(HostDeviceWindows, GapsByTheDevicesOwnCountsWhenEveryWindowHasThem) {
  // The table stood still between the sessions (eziotraced detaches its programs when no session
  // is open): the device's own counts say what it did meanwhile, 20 requests of 4 KiB.
  DeviceWindow a = window(10, 15), b = window(15, 25);
  a.device_start = {100, 100 * 4096};
  a.device_end = {110, 110 * 4096};
  b.device_start = {130, 130 * 4096};
  b.device_end = {145, 145 * 4096};
  a.device_read = b.device_read = true;
  EXPECT_EQ(converters::host_device_gaps({a, b}), (DeviceCounts{20, 20 * 4096, 0}));
  // Overlapping in time: no gap, whatever the table says.
  b.device_start = {105, 105 * 4096};
  EXPECT_EQ(converters::host_device_gaps({a, b}), (DeviceCounts{}));
  // Nested in the other: none either.
  b.device_start = {102, 102 * 4096};
  b.device_end = {104, 104 * 4096};
  EXPECT_EQ(converters::host_device_gaps({a, b}), (DeviceCounts{}));
  // One window without the device's counts (an older eziotraced): the table's gaps.
  b.device_read = false;
  EXPECT_EQ(converters::host_device_gaps({a, b}), (DeviceCounts{}));
  EXPECT_EQ(converters::host_device_gaps({window(100, 107), window(120, 126)}),
            (DeviceCounts{13, 13 * 512, 7}));
}

TEST(HostDeviceWindows, WindowsOfDifferentTablesAreNotJoined) {
  // Two tables (two recorders that loaded their own programs): their counters are unrelated.
  EXPECT_EQ(counts({window(0, 15), window(1000, 1010, kTable + 1)}),
            (DeviceCounts{15, 15 * 512, 7}));
}

// A part's figures: the node's table at its session's start and end (no window when end is 0),
// its own unattributed requests, and the device's own requests at its start and end (not read
// when both are 0).
using PartCounts = std::array<uint64_t, 5>;

// A task's part on node1: its process `pid` (one system call) and the device sda, whose session
// read the node's table and the device's counts as `c` says.
void write_part(const fs::path& dir, uint64_t pid, const PartCounts& c) {
  const auto [start, end, own, device_start, device_end] = c;
  fs::create_directories(dir);
  otf2::ArchiveWriter w(dir);
  Ref node = w.system_tree_node("node1", "machine");
  w.system_tree_node_property(node, "EZIOTRACE::UNATTRIBUTED::sda", own);
  w.system_tree_node_property(node, "EZIOTRACE::NOT_ISSUED::sda", own / 2);
  w.system_tree_node_property(node, "EZIOTRACE::STATUS", std::string_view("complete"));
  Ref proc = w.location_group(fmt::format("app [{}]", pid), OTF2_LOCATION_GROUP_TYPE_PROCESS, node);
  w.location(pid, fmt::format("app [{}]", pid), OTF2_LOCATION_TYPE_CPU_THREAD, proc);
  Ref dev = w.location_group("block sda", OTF2_LOCATION_GROUP_TYPE_PROCESS, node);
  const OTF2_LocationRef loc = (uint64_t{1} << 32) | 1;
  w.location(loc, "block sda", OTF2_LOCATION_TYPE_CPU_THREAD, dev);
  w.location_property(loc, schema::kUnattributedRequests, own);
  w.location_property(loc, schema::kUnattributedBytes, own * 4096);
  w.location_property(loc, schema::kNotIssuedRequests, own / 2);
  if (end != 0) {
    w.location_property(loc, schema::kUnattributedTable, kTable);
    w.location_property(loc, schema::kUnattributedRequestsAtStart, start);
    w.location_property(loc, schema::kUnattributedRequestsAtEnd, end);
    w.location_property(loc, schema::kUnattributedBytesAtStart, start * 4096);
    w.location_property(loc, schema::kUnattributedBytesAtEnd, end * 4096);
    w.location_property(loc, schema::kNotIssuedRequestsAtStart, start / 2);
    w.location_property(loc, schema::kNotIssuedRequestsAtEnd, end / 2);
  }
  if (device_end != 0) {
    w.location_property(loc, schema::kDeviceRequestsAtStart, device_start);
    w.location_property(loc, schema::kDeviceRequestsAtEnd, device_end);
    w.location_property(loc, schema::kDeviceBytesAtStart, device_start * 4096);
    w.location_property(loc, schema::kDeviceBytesAtEnd, device_end * 4096);
  }
  Ref write =
      w.region("write", "syscall:write", "eziotrace syscall layer", OTF2_REGION_ROLE_FILE_IO);
  auto e = w.event_writer(pid);
  e.enter(1000, write);
  e.leave(2000, write);
  w.close();
  test::write_host_clock_file(dir, "node1", 100);
}

struct Merged {
  std::map<std::string, uint64_t> node;      // node1's device properties
  std::map<std::string, uint64_t> location;  // summed over its device locations
};

Merged merge(const std::string& name, const std::vector<PartCounts>& parts, bool rewrite,
             fs::path* archive = nullptr) {
  const fs::path root = test::scratch_dir(name);
  std::vector<fs::path> given;
  for (size_t i = 0; i < parts.size(); ++i) {
    given.push_back(root / fmt::format("node1.{}", i));
    write_part(given.back(), 100 + i, parts[i]);
  }
  const fs::path out = root / "out";
  fs::create_directories(out);
  auto report = converters::merge_hosts(given, out, {}, "", rewrite);
  EXPECT_EQ(report.status, "complete");
  EXPECT_EQ(rewrite ? report.rewritten : report.assembled, parts.size());
  if (archive) *archive = out / "eziotrace.otf2";
  otf2::Archive merged = otf2::read_archive(out / "eziotrace.otf2");
  const otf2::Definitions& d = merged.defs;
  Merged m;
  for (const auto& p : d.node_properties) {
    if (d.str(d.nodes.at(p.owner).name) == "node1" && d.str(p.name).ends_with("::sda"))
      m.node[d.str(p.name)] = p.value.uint64;
  }
  for (const auto& p : d.location_properties)
    if (d.str(d.locations.at(p.location).name) == "block sda")
      m.location[d.str(p.name)] += p.value.uint64;
  return m;
}

TEST(MergeHostsWindows, OneHostsSessionsCountTheUnionOnBothPaths) {
  for (bool rewrite : {false, true}) {
    // Windows 10..25 and 18..33 of the node's table (the largest part alone: 15), and one nested.
    Merged m = merge(fmt::format("merge_hosts_windows_{}", rewrite),
                     {{10, 25, 15}, {18, 33, 15}, {20, 22, 2}}, rewrite);
    EXPECT_EQ(m.node["EZIOTRACE::UNATTRIBUTED::sda"], 23u) << rewrite;
    EXPECT_EQ(m.node["EZIOTRACE::NOT_ISSUED::sda"], 11u) << rewrite;
    // Once per host on its device locations; each session's window stays on its own.
    EXPECT_EQ(m.location[schema::kUnattributedRequests], 23u) << rewrite;
    EXPECT_EQ(m.location[schema::kUnattributedBytes], 23u * 4096) << rewrite;
    EXPECT_EQ(m.location[schema::kNotIssuedRequests], 11u) << rewrite;
    EXPECT_EQ(m.location[schema::kUnattributedRequestsAtStart], 10u + 18 + 20) << rewrite;
  }
}

TEST(MergeHostsWindows, RequestsBetweenSessionsAreWrittenAndShown) {
  for (bool rewrite : {false, true}) {
    // Windows 10..15 and 20..30 (not issued 5..7 and 10..15): 5 requests and 3 not-issued
    // flushes between the two sessions, in neither's counts.
    fs::path archive;
    Merged m = merge(fmt::format("merge_hosts_gap_{}", rewrite), {{10, 15, 5}, {20, 30, 10}},
                     rewrite, &archive);
    EXPECT_EQ(m.node["EZIOTRACE::UNATTRIBUTED::sda"], 15u) << rewrite;
    EXPECT_EQ(m.node["EZIOTRACE::OUTSIDE_WINDOWS::sda"], 5u + 3) << rewrite;
    EXPECT_EQ(m.node["EZIOTRACE::OUTSIDE_WINDOWS_BYTES::sda"], 5u * 4096) << rewrite;
    test::Run layers = test::eziotrace({"layers", archive.string(), "--by-host", "--json"});
    ASSERT_EQ(layers.status, 0) << layers.err;
    const auto rows = nlohmann::json::parse(layers.out)["outside_windows"];
    ASSERT_EQ(rows.size(), 1u) << rows;
    EXPECT_EQ(rows[0]["host"], "node1");
    EXPECT_EQ(rows[0]["device"], "sda");
    EXPECT_EQ(rows[0]["requests"], 8);
    EXPECT_EQ(rows[0]["bytes"], 5 * 4096);
  }
  // Overlapping windows: 0 written, so that the archive says none fell outside.
  Merged m = merge("merge_hosts_no_gap", {{10, 25, 15}, {18, 33, 15}}, false);
  EXPECT_EQ(m.node["EZIOTRACE::OUTSIDE_WINDOWS::sda"], 0u);
  EXPECT_EQ(m.node.count("EZIOTRACE::OUTSIDE_WINDOWS::sda"), 1u);
}

TEST(MergeHostsWindows, RequestsBetweenSessionsByTheDevicesOwnCounts) {
  // The node's table did not move between the sessions (no program attached), the device did 20
  // requests: those are what fell between them.
  fs::path archive;
  Merged m = merge("merge_hosts_gap_device", {{10, 15, 5, 100, 110}, {15, 25, 10, 130, 145}}, true,
                   &archive);
  EXPECT_EQ(m.node["EZIOTRACE::UNATTRIBUTED::sda"], 15u);
  EXPECT_EQ(m.node["EZIOTRACE::OUTSIDE_WINDOWS::sda"], 20u);
  EXPECT_EQ(m.node["EZIOTRACE::OUTSIDE_WINDOWS_BYTES::sda"], 20u * 4096);
}

TEST(MergeHostsWindows, AnOldPartKeepsTheLargestPartsRule) {
  // The windowed parts' union is 23, the old part (no window) saw 30 on its own.
  Merged m = merge("merge_hosts_windows_old", {{10, 25, 15}, {18, 33, 15}, {0, 0, 30}}, false);
  EXPECT_EQ(m.node["EZIOTRACE::UNATTRIBUTED::sda"], 30u);
  EXPECT_EQ(m.location[schema::kUnattributedRequests], 30u);
}

}  // namespace
}  // namespace ezio
