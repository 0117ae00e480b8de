// SPDX-License-Identifier: GPL-2.0-only
// merge-hosts on the parts of one MPI job recorded on two hosts (tests/support/synthetic_mpi.h:
// each part lists both ranks, the other host's on an eventless stand-in): each rank once, on its
// own host; one MPI_COMM_WORLD of both ranks; one communicator for each communicator both parts
// define alike, two for those they define apart; the messages' communicators and peers resolve
// to the right locations, assembled and rewritten alike.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/otf2/reader.h"
#include "converters/hosts/merge_hosts.h"
#include "converters/merge/comm_mapper.h"
#include "run.h"
#include "synthetic_mpi.h"

namespace ezio {
namespace {

namespace fs = std::filesystem;
constexpr uint64_t kHostB = uint64_t(1) << 44;  // location ids of the second part merged
constexpr OTF2_LocationRef kRank0 = 200, kRank1 = 200 + kHostB;

struct Comm {
  std::string name, parent;
  std::vector<uint64_t> locations;  // its ranks' locations
  bool operator<(const Comm& o) const {
    return std::tie(name, parent, locations) < std::tie(o.name, o.parent, o.locations);
  }
  bool operator==(const Comm& o) const = default;
  friend void PrintTo(const Comm& c, std::ostream* os) {
    *os << "{" << c.name << ", parent " << c.parent << ", locations";
    for (uint64_t l : c.locations) *os << " " << l;
    *os << "}";
  }
};

// A communicator's ranks' locations, through its group and the COMM_LOCATIONS group.
Comm resolve(const otf2::Definitions& d, const otf2::CommDef& c) {
  Comm out{d.str(c.name), "", {}};
  for (const auto& p : d.comms) {
    if (p.id == c.parent && c.parent != c.id) out.parent = d.str(p.name);
  }
  const otf2::GroupDef& g = d.groups.at(c.group_index);
  for (const auto& all : d.groups) {
    if (all.type != OTF2_GROUP_TYPE_COMM_LOCATIONS || all.paradigm != g.paradigm) continue;
    for (uint64_t rank : g.members) out.locations.push_back(all.members.at(rank));
  }
  return out;
}

std::vector<Comm> comms(const otf2::Definitions& d) {
  std::vector<Comm> out;
  for (const auto& c : d.comms) out.push_back(resolve(d, c));
  std::sort(out.begin(), out.end());
  return out;
}

const otf2::CommDef& comm_of(const otf2::Definitions& d, otf2::Ref id) {
  for (const auto& c : d.comms) {
    if (c.id == id) return c;
  }
  throw std::runtime_error("no communicator " + std::to_string(id));
}

struct Job {
  fs::path root = test::scratch_dir("merge_hosts_comms");
  fs::path a = test::write_mpi_part(root / "a", "node1", 0);
  fs::path b = test::write_mpi_part(root / "b", "node2", 1);

  otf2::Archive merge(const std::string& name, bool rewrite,
                      std::vector<fs::path> parts = {}) const {
    if (parts.empty()) parts = {a, b};
    const fs::path out = root / name;
    fs::create_directories(out);
    converters::merge_hosts(parts, out, {}, "", rewrite);
    return otf2::read_archive(out / "eziotrace.otf2");
  }
};

class MergeHostsComms : public testing::TestWithParam<bool> {};

TEST_P(MergeHostsComms, EachRankOnceOnItsHost) {
  Job job;
  otf2::Archive m = job.merge("out", GetParam());
  const auto& d = m.defs;
  std::map<OTF2_LocationRef, std::string> host;
  for (const auto& [id, l] : d.locations) {
    const auto& g = d.location_groups.at(l.group);
    EXPECT_FALSE(converters::is_stand_in_group(d.str(g.name))) << d.str(g.name);
    host[id] = d.str(d.nodes.at(g.node).name);
  }
  EXPECT_EQ(host, (std::map<OTF2_LocationRef, std::string>{{kRank0, "node1"}, {kRank1, "node2"}}));
  size_t located = 0;
  for (const auto& g : d.groups) {
    if (g.type != OTF2_GROUP_TYPE_COMM_LOCATIONS) continue;
    ++located;
    EXPECT_EQ(g.members, (std::vector<uint64_t>{kRank0, kRank1}));
  }
  EXPECT_EQ(located, 1u);
  const std::vector<uint64_t> both = {kRank0, kRank1};
  std::vector<Comm> want = {{"MPI_COMM_WORLD", "", both},
                            {"MPI_Comm_Self", "", {}},
                            {"comm dup", "MPI_COMM_WORLD", both},
                            {"comm split", "MPI_COMM_WORLD", {kRank0}},
                            {"comm split", "MPI_COMM_WORLD", {kRank1}}};
  std::sort(want.begin(), want.end());
  EXPECT_EQ(comms(d), want);
}

// Every MPI record names its communicator and a peer that are the right ones after unification.
TEST_P(MergeHostsComms, MessagesReachTheirPeers) {
  Job job;
  otf2::Archive m = job.merge("out", GetParam());
  std::map<std::string, int> seen;
  for (const auto& [loc, events] : m.events) {
    const OTF2_LocationRef peer = loc == kRank0 ? kRank1 : kRank0;
    for (const auto& e : events) {
      if (!otf2::is_mpi_event(e.kind) || e.kind == otf2::EventKind::MpiCollectiveBegin) continue;
      Comm c = resolve(m.defs, comm_of(m.defs, e.ref));
      if (e.kind == otf2::EventKind::MpiCollectiveEnd) {
        EXPECT_EQ(c.name, "comm split");
        EXPECT_EQ(c.locations, std::vector<uint64_t>{loc});
        ++seen["barrier"];
        continue;
      }
      ASSERT_LT(e.f1, c.locations.size());
      EXPECT_EQ(c.locations[e.f1], peer) << "peer rank " << e.f1 << " of " << c.name;
      EXPECT_EQ(c.name, e.f2 == 7 ? "MPI_COMM_WORLD" : "comm dup");
      ++seen[e.kind == otf2::EventKind::MpiSend ? "send" : "recv"];
    }
  }
  EXPECT_EQ(seen, (std::map<std::string, int>{{"barrier", 2}, {"recv", 2}, {"send", 2}}));
}

INSTANTIATE_TEST_SUITE_P(AssembledOrRewritten, MergeHostsComms, testing::Bool(),
                         [](const auto& info) { return info.param ? "Rewritten" : "Assembled"; });

TEST(MergeHostsCommsBoth, AssembledAndRewrittenDefineTheSame) {
  Job job;
  otf2::Archive assembled = job.merge("assembled", false), rewritten = job.merge("rewritten", true);
  EXPECT_EQ(comms(assembled.defs), comms(rewritten.defs));
  EXPECT_EQ(assembled.defs.comms.size(), 5u);
  EXPECT_EQ(rewritten.defs.comms.size(), 5u);
}

// `check` pairs both messages across the hosts, none received before it was sent, none unresolved.
TEST(MergeHostsCommsBoth, CheckPairsTheMessages) {
  Job job;
  job.merge("out", false);
  auto r = test::eziotrace({"check", "--json", (job.root / "out").string()});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["messages"].size(), 2u) << j.dump();
  for (const auto& row : j["messages"]) {
    EXPECT_NE(row["sender_host"], row["receiver_host"]) << row;
    EXPECT_EQ(row["messages"], 1) << row;
    EXPECT_EQ(row["received_before_sent"], 0) << row;
  }
  EXPECT_EQ(j["check"][0]["unresolved"], 0);
  EXPECT_EQ(j["check"][0]["unmatched_sends"], 0);
}

// The rank of a host whose part is missing keeps the stand-in, so that the ranks stay in place.
TEST(MergeHostsCommsBoth, AMissingHostsRankKeepsItsStandIn) {
  Job job;
  otf2::Archive m = job.merge("out", false, {job.b, job.root / "nothing"});
  const auto& d = m.defs;
  std::vector<uint64_t> ranks;
  for (const auto& g : d.groups) {
    if (g.type == OTF2_GROUP_TYPE_COMM_LOCATIONS) ranks = g.members;
  }
  ASSERT_EQ(ranks.size(), 2u);
  EXPECT_EQ(ranks[1], kRank0) << "rank 1, of the first part merged";
  const auto& stand_in = d.locations.at(ranks[0]);
  EXPECT_TRUE(converters::is_stand_in_group(d.str(d.location_groups.at(stand_in.group).name)));
}

// Two parts holding the same rank are not one job: their communicators stay apart.
TEST(MergeHostsCommsBoth, TwoPartsOfOneRankStayApart) {
  Job job;
  const fs::path other = test::write_mpi_part(job.root / "c", "node2", 0);
  otf2::Archive m = job.merge("out", false, {job.a, other});
  size_t worlds = 0;
  for (const auto& c : m.defs.comms) worlds += m.defs.str(c.name) == "MPI_COMM_WORLD";
  EXPECT_EQ(worlds, 2u);
}

}  // namespace
}  // namespace ezio
