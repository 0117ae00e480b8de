// SPDX-License-Identifier: GPL-2.0-only
// The causality check (analysis/model/messages.h, `eziotrace check`) on a hand-written archive of
// two hosts: sends paired with receives per communicator, ranks and tag, in order; a receive ends
// when the call around it is left (MPI_Recv, the MPI_Wait of an MPI_Irecv); a receive that ended
// before its send started is counted for its pair of hosts, with the gap; a send never received
// is unmatched.
#include <gtest/gtest.h>

#include "analysis/analyzers/check.h"
#include "common/otf2/writer.h"
#include "run.h"

namespace fs = std::filesystem;
using ezio::otf2::Ref;

namespace {

constexpr OTF2_LocationRef kA = 10, kB = 20;

fs::path write_two_hosts(const fs::path& dir) {
  ezio::otf2::ArchiveWriter w(dir);
  const Ref root = w.system_tree_node("cluster", "machine");
  const Ref host_a = w.system_tree_node("hostA", "node", root);
  const Ref host_b = w.system_tree_node("hostB", "node", root);
  w.location(kA, "app [10]", OTF2_LOCATION_TYPE_CPU_THREAD,
             w.location_group("app [10]", OTF2_LOCATION_GROUP_TYPE_PROCESS, host_a));
  w.location(kB, "app [20]", OTF2_LOCATION_TYPE_CPU_THREAD,
             w.location_group("app [20]", OTF2_LOCATION_GROUP_TYPE_PROCESS, host_b));
  w.paradigm(OTF2_PARADIGM_MPI, "MPI", OTF2_PARADIGM_CLASS_PROCESS);
  w.group("", OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, {kA, kB});
  const Ref world_group =
      w.group("", OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, {0, 1});
  const Ref world = w.comm("MPI_COMM_WORLD", world_group);
  auto region = [&](const char* name) {
    return w.region(name, name, "", OTF2_REGION_ROLE_POINT2POINT, OTF2_PARADIGM_MPI);
  };
  const Ref send = region("MPI_Send"), recv = region("MPI_Recv"), wait = region("MPI_Wait");
  const Ref irecv = region("MPI_Irecv");

  OTF2_EvtWriter* a = w.events(kA);
  OTF2_EvtWriter_Enter(a, nullptr, 100, send);
  OTF2_EvtWriter_MpiSend(a, nullptr, 110, 1, world, 5, 4);  // received at 115: fine
  OTF2_EvtWriter_Leave(a, nullptr, 120, send);
  OTF2_EvtWriter_Enter(a, nullptr, 300, send);
  OTF2_EvtWriter_MpiSend(a, nullptr, 305, 1, world, 5, 4);  // received at 299: 1 ns early
  OTF2_EvtWriter_Leave(a, nullptr, 310, send);
  OTF2_EvtWriter_Enter(a, nullptr, 400, recv);
  OTF2_EvtWriter_MpiRecv(a, nullptr, 420, 1, world, 9, 4);
  OTF2_EvtWriter_Leave(a, nullptr, 430, recv);
  OTF2_EvtWriter_MpiSend(a, nullptr, 500, 1, world, 77, 4);  // never received

  OTF2_EvtWriter* b = w.events(kB);
  OTF2_EvtWriter_Enter(b, nullptr, 90, recv);
  OTF2_EvtWriter_MpiRecv(b, nullptr, 112, 0, world, 5, 4);
  OTF2_EvtWriter_Leave(b, nullptr, 115, recv);
  OTF2_EvtWriter_Enter(b, nullptr, 200, irecv);
  OTF2_EvtWriter_MpiIrecvRequest(b, nullptr, 201, 1);
  OTF2_EvtWriter_Leave(b, nullptr, 202, irecv);
  OTF2_EvtWriter_Enter(b, nullptr, 280, wait);
  OTF2_EvtWriter_MpiIrecv(b, nullptr, 290, 0, world, 5, 4, 1);
  OTF2_EvtWriter_Leave(b, nullptr, 299, wait);
  OTF2_EvtWriter_Enter(b, nullptr, 390, send);
  OTF2_EvtWriter_MpiSend(b, nullptr, 395, 0, world, 9, 4);
  OTF2_EvtWriter_Leave(b, nullptr, 397, send);
  w.clock({1'000'000'000, 0, 600, OTF2_UNDEFINED_TIMESTAMP});
  w.close();
  return w.anchor();
}

TEST(Messages, PairedInOrderPerHostPair) {
  const fs::path anchor = write_two_hosts(ezio::test::scratch_dir("messages") / "a");
  const ezio::analysis::CheckResult r = ezio::analysis::check_archive(anchor);
  ASSERT_EQ(r.messages.pairs.size(), 2u);
  const auto& ab = r.messages.pairs[0];
  EXPECT_EQ(ab.sender_host, "hostA");
  EXPECT_EQ(ab.receiver_host, "hostB");
  EXPECT_EQ(ab.messages, 2u);
  EXPECT_EQ(ab.received_before, 1u);
  EXPECT_EQ(ab.worst_ns, 1u);  // sent from 300 (MPI_Send entered), received by 299 (MPI_Wait left)
  const auto& ba = r.messages.pairs[1];
  EXPECT_EQ(ba.sender_host, "hostB");
  EXPECT_EQ(ba.messages, 1u);
  EXPECT_EQ(ba.received_before, 0u);
  EXPECT_EQ(r.messages.unmatched_sends, 1u);
  EXPECT_EQ(r.messages.unmatched_receives, 0u);
  EXPECT_EQ(r.messages.unresolved, 0u);
  EXPECT_EQ(r.violations(), 1u);
  ASSERT_EQ(r.hosts.size(), 2u);
  EXPECT_EQ(r.hosts[0].host, "hostA");
  EXPECT_FALSE(r.hosts[0].error_ns.has_value());
  EXPECT_EQ(r.hosts[1].inversions, 0u);
}

}  // namespace
