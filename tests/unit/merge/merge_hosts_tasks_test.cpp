// SPDX-License-Identifier: GPL-2.0-only
// `eziotrace merge-hosts` of several parts of one host (several tasks of one step on a node, each
// recorded by its own kernel session): one system-tree node for the host, every task's process
// under it, one group per block device, loss counters summed and the device's unattributed
// requests counted once (the largest part's: these parts have no windows of the node's table,
// merge_hosts_windows_test.cpp has those; docs/cluster.md).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "common/otf2/event_writer.h"
#include "common/otf2/reader.h"
#include "common/otf2/writer.h"
#include "converters/hosts/merge_hosts.h"
#include "host_clock_file.h"
#include "run.h"

namespace ezio {
namespace {

namespace fs = std::filesystem;
using otf2::Ref;

// One task's part on `host`: its process `pid` (one thread, one system call) and the device sda,
// with `lost` syscall events lost and `unattributed` requests of sda that no process of its own
// made; its clock measured against node1 (error error_ns).
void write_task_part(const fs::path& dir, const std::string& host, uint64_t pid, uint64_t lost,
                     uint64_t unattributed, int64_t error_ns) {
  fs::create_directories(dir);
  otf2::ArchiveWriter w(dir);
  Ref node = w.system_tree_node(host, "machine");
  w.system_tree_node_property(node, "EZIOTRACE::LOST::syscall", lost);
  w.system_tree_node_property(node, "EZIOTRACE::UNATTRIBUTED::sda", unattributed);
  // The empty flushes no one issued, counted by the same sessions the same way.
  w.system_tree_node_property(node, "EZIOTRACE::NOT_ISSUED::sda", 2 * unattributed);
  w.system_tree_node_property(node, "EZIOTRACE::STATUS", std::string_view("complete"));
  Ref proc = w.location_group(fmt::format("app [{}]", pid), OTF2_LOCATION_GROUP_TYPE_PROCESS, node);
  w.location_group_property(proc, "EZIOTRACE::PID", pid);
  w.location(pid, fmt::format("app [{}]", pid), OTF2_LOCATION_TYPE_CPU_THREAD, proc);
  Ref dev = w.location_group("block sda", OTF2_LOCATION_GROUP_TYPE_PROCESS, node);
  const OTF2_LocationRef dev_loc = (uint64_t{1} << 32) | 1;
  w.location(dev_loc, "block sda", OTF2_LOCATION_TYPE_CPU_THREAD, dev);
  w.location_property(dev_loc, "EZIOTRACE::UNATTRIBUTED_REQUESTS", unattributed);
  Ref write =
      w.region("write", "syscall:write", "eziotrace syscall layer", OTF2_REGION_ROLE_FILE_IO);
  auto e = w.event_writer(pid);
  e.enter(1000, write);
  e.leave(2000, write);
  w.close();
  test::write_host_clock_file(dir, host, error_ns);
}

uint64_t node_uint(const otf2::Definitions& d, const std::string& node, const std::string& name) {
  for (const auto& p : d.node_properties)
    if (d.str(d.nodes.at(p.owner).name) == node && d.str(p.name) == name) return p.value.uint64;
  ADD_FAILURE() << node << " has no " << name;
  return 0;
}

TEST(MergeHostsTasks, TheTasksOfOneHostShareItsNodeAndDevices) {
  const fs::path root = test::scratch_dir("merge_hosts_tasks");
  // node1: tasks 0 and 1 (its sessions saw 3 and 4 unattributed requests), node2: task 2.
  write_task_part(root / "node1", "node1", 100, 1, 3, 200);
  write_task_part(root / "node1.1", "node1", 200, 2, 4, 300);
  write_task_part(root / "node2", "node2", 100, 5, 7, 250);
  const fs::path out = root / "out";
  fs::create_directories(out);
  auto report = converters::merge_hosts({root / "node1", root / "node1.1", root / "node2"}, out);
  EXPECT_EQ(report.status, "complete");
  EXPECT_EQ(report.hosts, 2u);

  otf2::Archive merged = otf2::read_archive(out / "eziotrace.otf2");
  const otf2::Definitions& d = merged.defs;
  std::map<std::string, int> nodes;
  for (const auto& [id, n] : d.nodes) ++nodes[d.str(n.name)];
  EXPECT_EQ(nodes, (std::map<std::string, int>{{"cluster", 1}, {"node1", 1}, {"node2", 1}}));
  // Under node1: both tasks' processes and one sda; under node2: its process and its sda.
  std::map<std::string, std::multiset<std::string>> groups;  // host -> its location groups
  for (const auto& [id, g] : d.location_groups)
    groups[d.str(d.nodes.at(g.node).name)].insert(d.str(g.name));
  EXPECT_EQ(groups["node1"], (std::multiset<std::string>{"app [100]", "app [200]", "block sda"}));
  EXPECT_EQ(groups["node2"], (std::multiset<std::string>{"app [100]", "block sda"}));
  size_t threads = 0;  // every task's thread with its events (the devices have none here)
  for (const auto& [loc, events] : merged.events) {
    if (events.empty()) continue;
    EXPECT_EQ(events.size(), 2u) << loc;
    ++threads;
  }
  EXPECT_EQ(threads, 3u);

  EXPECT_EQ(node_uint(d, "node1", "EZIOTRACE::LOST::syscall"), 3u);      // 1 + 2: each its own
  EXPECT_EQ(node_uint(d, "node1", "EZIOTRACE::UNATTRIBUTED::sda"), 4u);  // once: the largest
  EXPECT_EQ(node_uint(d, "node1", "EZIOTRACE::NOT_ISSUED::sda"), 8u);    // likewise
  EXPECT_EQ(node_uint(d, "node1", "EZIOTRACE::CLOCK_ERROR_NS"), 300u);
  EXPECT_EQ(node_uint(d, "node2", "EZIOTRACE::UNATTRIBUTED::sda"), 7u);
  EXPECT_EQ(node_uint(d, "cluster", "EZIOTRACE::LOST::syscall"), 8u);
  EXPECT_EQ(node_uint(d, "cluster", "EZIOTRACE::HOSTS"), 2u);
  // The device's unattributed requests once per host, on one of its locations.
  std::map<std::string, uint64_t> unattributed;
  for (const auto& p : d.location_properties) {
    if (d.str(p.name) != "EZIOTRACE::UNATTRIBUTED_REQUESTS") continue;
    const auto& g = d.location_groups.at(d.locations.at(p.location).group);
    unattributed[d.str(d.nodes.at(g.node).name)] += p.value.uint64;
  }
  EXPECT_EQ(unattributed, (std::map<std::string, uint64_t>{{"node1", 4}, {"node2", 7}}));
  // The analyzers take it: one Block row set per host.
  test::Run layers = test::eziotrace({"layers", out.string(), "--by-host", "--json"});
  EXPECT_EQ(layers.status, 0) << layers.err;
}

}  // namespace
}  // namespace ezio
