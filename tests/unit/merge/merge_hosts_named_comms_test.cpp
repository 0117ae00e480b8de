// SPDX-License-Identifier: GPL-2.0-only
// merge-hosts on the parts of one MPI job whose hosts name and number their sub-communicators
// each their own way, as EZTrace's ranks do (tests/support/synthetic_mpi.h, own_names): one
// communicator for each of the job's (MPI_COMM_WORLD, two MPI_Comm_dup of it, a communicator made
// from the first dup), named as the first part names it; each rank's own MPI_Comm_split piece
// stays its own; the messages' communicators resolve to the unified ones; assembled and rewritten
// alike; and without own names (alike definitions) nothing changes.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/otf2/reader.h"
#include "converters/hosts/merge_hosts.h"
#include "run.h"
#include "synthetic_mpi.h"

namespace ezio {
namespace {

namespace fs = std::filesystem;
constexpr uint64_t kHostB = uint64_t(1) << 44;  // location ids of the second part merged
constexpr OTF2_LocationRef kRank0 = 200, kRank1 = 200 + kHostB;

// A communicator as "name < parent's name: its ranks' locations".
std::string describe(const otf2::Definitions& d, const otf2::CommDef& c) {
  std::string out = d.str(c.name) + " <";
  for (const auto& p : d.comms) {
    if (p.id == c.parent && c.parent != c.id) out += " " + d.str(p.name);
  }
  out += ":";
  const otf2::GroupDef& g = d.groups.at(c.group_index);
  for (const auto& all : d.groups) {
    if (all.type != OTF2_GROUP_TYPE_COMM_LOCATIONS || all.paradigm != g.paradigm) continue;
    for (uint64_t rank : g.members) out += " " + std::to_string(all.members.at(rank));
  }
  return out;
}

std::multiset<std::string> comms(const otf2::Definitions& d) {
  std::multiset<std::string> out;
  for (const auto& c : d.comms) out.insert(describe(d, c));
  return out;
}

struct NamedJob {
  fs::path root = test::scratch_dir("merge_hosts_named_comms");
  fs::path a = test::write_mpi_part(root / "a", "node1", 0, true, 0, true);
  fs::path b = test::write_mpi_part(root / "b", "node2", 1, true, 0, true);

  otf2::Archive merge(const std::string& name, bool rewrite) const {
    const fs::path out = root / name;
    fs::create_directories(out);
    converters::merge_hosts({a, b}, out, {}, "", rewrite);
    return otf2::read_archive(out / "eziotrace.otf2");
  }
};

const std::string kBoth = std::to_string(kRank0) + " " + std::to_string(kRank1);

class MergeHostsNamedComms : public testing::TestWithParam<bool> {};

TEST_P(MergeHostsNamedComms, EachJobCommunicatorOnceAsTheFirstPartNamesIt) {
  NamedJob job;
  otf2::Archive m = job.merge("out", GetParam());
  std::multiset<std::string> want = {
      "MPI_COMM_WORLD <: " + kBoth,
      "MPI_Comm_Self <:",
      "MPI_COMM_1 < MPI_COMM_WORLD: " + kBoth,  // rank 1's MPI_COMM_1073741825
      "MPI_COMM_2 < MPI_COMM_WORLD: " + kBoth,  // the second dup, not the first
      "MPI_COMM_3 < MPI_COMM_1: " + kBoth,      // made from the first dup
      "MPI_COMM_4 < MPI_COMM_WORLD: " + std::to_string(kRank0),
      "MPI_COMM_1073741824 < MPI_COMM_WORLD: " + std::to_string(kRank1)};
  EXPECT_EQ(comms(m.defs), want);
}

// Rank 1 sends on its own name of the first dup; rank 0 receives on its own: one communicator.
TEST_P(MergeHostsNamedComms, BothEndsOfAMessageOnTheUnifiedDup) {
  NamedJob job;
  otf2::Archive m = job.merge("out", GetParam());
  std::map<std::string, int> seen;
  for (const auto& [loc, events] : m.events) {
    for (const auto& e : events) {
      if (e.kind != otf2::EventKind::MpiSend && e.kind != otf2::EventKind::MpiRecv) continue;
      if (e.f2 != 8) continue;  // the message on the dup
      for (const auto& c : m.defs.comms) {
        if (c.id == e.ref) ++seen[describe(m.defs, c) + (loc == kRank0 ? " at 0" : " at 1")];
      }
    }
  }
  EXPECT_EQ(seen,
            (std::map<std::string, int>{{"MPI_COMM_1 < MPI_COMM_WORLD: " + kBoth + " at 0", 1},
                                        {"MPI_COMM_1 < MPI_COMM_WORLD: " + kBoth + " at 1", 1}}));
}

INSTANTIATE_TEST_SUITE_P(AssembledOrRewritten, MergeHostsNamedComms, testing::Bool(),
                         [](const auto& info) { return info.param ? "Rewritten" : "Assembled"; });

TEST(MergeHostsNamedCommsBoth, AssembledAndRewrittenDefineTheSame) {
  NamedJob job;
  otf2::Archive assembled = job.merge("assembled", false), rewritten = job.merge("rewritten", true);
  EXPECT_EQ(comms(assembled.defs), comms(rewritten.defs));
  EXPECT_EQ(assembled.defs.comms.size(), 7u);
}

// `check` resolves both messages (one on MPI_COMM_WORLD, one on the dup each host names its way).
TEST(MergeHostsNamedCommsBoth, CheckPairsTheMessages) {
  NamedJob job;
  job.merge("out", false);
  auto r = test::eziotrace({"check", "--json", (job.root / "out").string()});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["messages"].size(), 2u) << j.dump();
  EXPECT_EQ(j["check"][0]["unresolved"], 0) << j.dump();
  EXPECT_EQ(j["check"][0]["unmatched_sends"], 0) << j.dump();
}

}  // namespace
}  // namespace ezio
