// SPDX-License-Identifier: GPL-2.0-only
// The merge on a real EZTrace run of io_threads with a synthesized kernel archive: EZTrace's
// groups and communicators, and what the merge drops with EZTrace's own I/O.
#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "merge_fixture.h"
#include "run.h"

namespace ezio::test {
namespace {
using converters::EventKind;

TEST(Merge, EztraceGroupsAndCommsAreKeptDenseWithoutDuplicates) {
  const auto& f = traced_run();
  // EZTrace's own archive defines group 0 and comm 0 twice (docs/merge.md).
  ASSERT_GT(f.inputs[0].archive->defs.duplicate_definitions, 0u);
  auto m = merge_with_synthetic("comms", 0);
  const auto& d = m.archive.defs;
  EXPECT_EQ(d.duplicate_definitions, 0u);
  expect_dense_ids(d.groups, "group");
  expect_dense_ids(d.comms, "comm");
  EXPECT_EQ(m.report.comms, d.comms.size());
  EXPECT_EQ(m.report.groups, d.groups.size());
  // One COMM_LOCATIONS group, first, listing each process's EZTrace location 0 as its kernel TID.
  ASSERT_FALSE(d.groups.empty());
  EXPECT_EQ(d.groups[0].type, OTF2_GROUP_TYPE_COMM_LOCATIONS);
  std::vector<uint64_t> mains;
  for (const auto& in : f.inputs) {
    for (const auto& t : in.process.threads) {
      if (t.location == 0) mains.push_back(t.tid);
    }
  }
  EXPECT_EQ(d.groups[0].members, mains);
  for (size_t i = 1; i < d.groups.size(); ++i) {
    EXPECT_EQ(d.groups[i].type, OTF2_GROUP_TYPE_COMM_GROUP) << i;
  }
  // Every comm names a COMM_GROUP; no two comms are the same.
  std::set<std::tuple<std::string, size_t, converters::Ref>> seen;
  for (const auto& c : d.comms) {
    ASSERT_LT(c.group_index, d.groups.size()) << d.str(c.name);
    EXPECT_EQ(d.groups[c.group_index].type, OTF2_GROUP_TYPE_COMM_GROUP) << d.str(c.name);
    EXPECT_TRUE(seen.insert({d.str(c.name), c.group_index, c.parent}).second) << d.str(c.name);
  }
  // EZTrace's handles keep their communicator, MPI_Comm_Self, as EZTrace defined it.
  size_t user_handles = 0;
  for (const auto& [ref, h] : d.io_handles) {
    if (d.str(d.io_paradigms.at(h.paradigm).identification) == "linux") continue;
    ++user_handles;
    ASSERT_LT(h.comm_index, d.comms.size()) << d.str(h.name);
    EXPECT_EQ(d.str(d.comms[h.comm_index].name), "MPI_Comm_Self") << d.str(h.name);
  }
  EXPECT_GT(user_handles, 0u);
  ezio::test::Run p = run({"otf2-print", "-A", m.anchor.string()});
  EXPECT_EQ(p.status, 0);
  EXPECT_EQ(p.err, "");
}

TEST(Merge, EztraceOwnIoLeavesNoDanglingCallLinkNorRmLocation) {
  auto m = merge_with_synthetic("own_io_links", 0);
  ASSERT_NE(m.counts.own_block_call, 0u);
  ASSERT_NE(m.counts.app_block_call, 0u);
  const auto& d = m.archive.defs;
  // No location of EZTrace's `rm` children is left, the page-cache metric locations included.
  for (const auto& [loc, def] : d.locations) {
    EXPECT_EQ(d.str(def.name).find("rm ["), std::string::npos) << d.str(def.name);
  }
  for (const auto& [ref, g] : d.location_groups) {
    EXPECT_EQ(d.str(g.name).find("rm ["), std::string::npos) << d.str(g.name);
  }
  // Every call.id on a block request is the call.id of a system call of the archive.
  converters::Ref call_id = OTF2_UNDEFINED_ATTRIBUTE;
  for (const auto& [ref, a] : d.attributes) {
    if (d.str(a.name) == "call.id") call_id = ref;
  }
  ASSERT_NE(call_id, OTF2_UNDEFINED_ATTRIBUTE);
  std::set<uint64_t> calls;
  std::vector<uint64_t> linked;
  size_t request_events = 0;
  for (const auto& [loc, events] : m.archive.events) {
    for (const auto& e : events) {
      for (const auto& a : e.attributes) {
        if (a.id != call_id) continue;
        if (e.kind == EventKind::Enter) calls.insert(a.value.uint64);
        if (e.kind == EventKind::IoOperationBegin) linked.push_back(a.value.uint64);
      }
      request_events += e.kind == EventKind::IoOperationIssued;
    }
  }
  EXPECT_EQ(linked, std::vector<uint64_t>{m.counts.app_block_call});
  for (uint64_t id : linked) EXPECT_TRUE(calls.count(id)) << "dangling call.id " << id;
  EXPECT_EQ(request_events, 1u);  // the dropped request's issue and completion went with it
  EXPECT_EQ(m.report.own_io_block_requests, 1u);
}

}  // namespace
}  // namespace ezio::test
