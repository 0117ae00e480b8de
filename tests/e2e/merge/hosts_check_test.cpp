// SPDX-License-Identifier: GPL-2.0-only
// `eziotrace check` and merge-hosts' check on real MPI messages (root, BPF, EZTrace, MPICH): a
// 2-rank MPICH job recorded under `eziotrace -t mpich` passes; split into two hosts' parts (one
// rank each, tests/support/split_hosts.h) and merged back with clock files of a 0 offset it
// still passes; merged with one host's clock shifted by a second either way, the messages that
// host sends (or receives) arrive before they were sent, and both merge-hosts and check fail.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "common/otf2/reader.h"
#include "run.h"
#include "split_hosts.h"

namespace fs = std::filesystem;
using ezio::test::program;
using nlohmann::json;

namespace {

// A clock file as `record --clock-ref hostA` writes it, with the offset hostA - this host.
void write_clock_file(const fs::path& dir, const std::string& host, int64_t offset_ns) {
  json m = {{"offset_ns", offset_ns}, {"error_ns", 2000}, {"at_ns", 0}, {"rounds", 200}};
  std::ofstream(dir / "eziotrace-clock.json")
      << json{{"reference", "hostA"}, {"host", host}, {"start", m}, {"end", m}}.dump();
}

// `check --json`: the messages from one host to another, and those received before sent.
std::pair<int, int> messages(const json& j, const std::string& from, const std::string& to) {
  for (const auto& row : j["messages"]) {
    if (row["sender_host"] == from && row["receiver_host"] == to) {
      return {row["messages"], row["received_before_sent"]};
    }
  }
  return {0, 0};
}

class HostsCheck : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    ASSERT_TRUE(fs::exists(program("mpi_node_io"))) << "mpi_node_io was not built: no MPICH";
    dir_ = ezio::test::scratch_dir("hosts-check");
    const fs::path out = dir_ / "job";
    auto r =
        ezio::test::eziotrace({"-t", "mpich", "-o", out.string(), "--", "mpirun.mpich", "-wdir",
                               dir_.string(), "-np", "2", program("mpi_node_io"), dir_.string()});
    ASSERT_EQ(r.status, 0) << r.out << r.err;
    anchor_ = out / "eziotrace.otf2";
    // One rank's process on hostB, everything else (the other rank, the launcher, the device)
    // on hostA; either rank will do, a message goes each way.
    std::vector<std::string> ranks;
    {
      ezio::otf2::ArchiveReader reader(anchor_);
      const auto& d = reader.defs();
      for (const auto& [id, g] : d.location_groups) {
        if (d.str(g.name).starts_with("mpi_node_io [")) ranks.push_back(d.str(g.name));
      }
    }
    ASSERT_EQ(ranks.size(), 2u);
    parts_ = ezio::test::split_hosts(
        anchor_, {"hostA", "hostB"},
        [&](const std::string& group) { return group == ranks[1] ? 1u : 0u; }, dir_ / "parts");
  }

  // merge-hosts with hostB's clock offset; returns its run and `check --json` of the result.
  std::pair<ezio::test::Run, ezio::test::Run> merge_with_offset(int64_t offset_ns) {
    write_clock_file(parts_[0], "hostA", 0);
    write_clock_file(parts_[1], "hostB", offset_ns);
    const fs::path out = dir_ / ("merged" + std::to_string(offset_ns));
    auto merge = ezio::test::eziotrace(
        {"merge-hosts", parts_[0].string(), parts_[1].string(), "-o", out.string()});
    return {merge, ezio::test::eziotrace({"check", "--json", out.string()})};
  }

  static inline fs::path dir_, anchor_;
  static inline std::vector<fs::path> parts_;
};

TEST_F(HostsCheck, OneHostRecordingPasses) {
  auto r = ezio::test::eziotrace({"check", "--json", anchor_.string()});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  json j = json::parse(r.out);
  ASSERT_EQ(j["hosts"].size(), 1u) << j.dump();
  EXPECT_EQ(j["hosts"][0]["nesting_inversions"], 0);
  EXPECT_GT(j["hosts"][0]["calls_checked"], 0);
  EXPECT_EQ(j["hosts"][0]["clock_error_s"], nullptr);
  ASSERT_EQ(j["messages"].size(), 1u) << j.dump();
  EXPECT_EQ(j["messages"][0]["messages"], 2);  // mpi_node_io.c: rank 0 -> 1, then 1 -> 0
  EXPECT_EQ(j["messages"][0]["received_before_sent"], 0);
  EXPECT_EQ(j["check"][0]["violations"], 0);
  EXPECT_EQ(j["check"][0]["unmatched_sends"], 0);
  EXPECT_EQ(j["check"][0]["unresolved"], 0);
}

TEST_F(HostsCheck, RightOffsetsPass) {
  auto [merge, check] = merge_with_offset(0);
  ASSERT_EQ(merge.status, 0) << merge.out << merge.err;
  EXPECT_NE(merge.err.find("check: 0 violation(s), 2 MPI message(s) paired"), std::string::npos)
      << merge.err;
  EXPECT_NE(merge.err.find("host hostB: clock error bound 2.000 us"), std::string::npos)
      << merge.err;
  ASSERT_EQ(check.status, 0) << check.out << check.err;
  json j = json::parse(check.out);
  EXPECT_EQ(messages(j, "hostA", "hostB"), std::make_pair(1, 0)) << j["messages"];
  EXPECT_EQ(messages(j, "hostB", "hostA"), std::make_pair(1, 0)) << j["messages"];
  ASSERT_EQ(j["hosts"].size(), 2u);
  for (const auto& h : j["hosts"]) {
    EXPECT_EQ(h["nesting_inversions"], 0) << h;
    EXPECT_GT(h["calls_checked"], 0) << h;
    EXPECT_DOUBLE_EQ(h["clock_error_s"].get<double>(), 2e-6) << h;
  }
}

// The real ranks' communicators, unified: one MPI_COMM_WORLD of both ranks, each on its host's
// location (docs/cluster.md, "One job's communicators").
TEST_F(HostsCheck, OneWorldOfBothHostsRanks) {
  auto [merge, check] = merge_with_offset(0);
  ASSERT_EQ(merge.status, 0) << merge.out << merge.err;
  ezio::otf2::ArchiveReader reader(dir_ / "merged0");
  const auto& d = reader.defs();
  std::vector<uint64_t> ranks;
  for (const auto& g : d.groups) {
    if (g.type == OTF2_GROUP_TYPE_COMM_LOCATIONS && g.paradigm == OTF2_PARADIGM_MPI) {
      EXPECT_TRUE(ranks.empty()) << "two MPI COMM_LOCATIONS groups";
      ranks = g.members;
    }
  }
  std::vector<std::string> hosts;
  for (uint64_t r : ranks) {
    const auto& group = d.location_groups.at(d.locations.at(r).group);
    EXPECT_TRUE(d.str(group.name).starts_with("mpi_node_io [")) << d.str(group.name);
    hosts.push_back(d.str(d.nodes.at(group.node).name));
  }
  std::sort(hosts.begin(), hosts.end());
  EXPECT_EQ(hosts, (std::vector<std::string>{"hostA", "hostB"}));
  size_t worlds = 0;
  for (const auto& c : d.comms) {
    if (d.str(c.name) != "MPI_COMM_WORLD") continue;
    ++worlds;
    EXPECT_EQ(d.groups.at(c.group_index).members, (std::vector<uint64_t>{0, 1}));
  }
  EXPECT_EQ(worlds, 1u);
}

// hostB's events a second late: what it sends arrives at hostA before it left.
TEST_F(HostsCheck, AClockASecondWrongFails) {
  for (int64_t offset : {int64_t(1'000'000'000), int64_t(-1'000'000'000)}) {
    SCOPED_TRACE("offset " + std::to_string(offset));
    auto [merge, check] = merge_with_offset(offset);
    EXPECT_EQ(merge.status, 3) << merge.out << merge.err;
    EXPECT_NE(merge.err.find("check: 1 violation(s), 2 MPI message(s) paired"), std::string::npos)
        << merge.err;
    EXPECT_EQ(check.status, 3) << check.out << check.err;
    json j = json::parse(check.out);
    const int late = offset > 0 ? 1 : 0;
    EXPECT_EQ(messages(j, "hostB", "hostA"), std::make_pair(1, late)) << j["messages"];
    EXPECT_EQ(messages(j, "hostA", "hostB"), std::make_pair(1, 1 - late)) << j["messages"];
    EXPECT_EQ(j["check"][0]["violations"], 1);
    for (const auto& row : j["messages"]) {
      if (row["received_before_sent"] == 1) {
        EXPECT_GT(row["worst_s"].get<double>(), 0.9) << row;
      }
    }
  }
}

}  // namespace
