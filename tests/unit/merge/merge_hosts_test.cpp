// SPDX-License-Identifier: GPL-2.0-only
// `eziotrace merge-hosts`: two synthetic host archives (tests/support/synthetic.h), one of them
// with a clock file of a large offset and drift, merged onto the reference's timeline.
#include "converters/hosts/merge_hosts.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/otf2/reader.h"
#include "run.h"
#include "synthetic.h"

namespace ezio {
namespace {

namespace fs = std::filesystem;
using converters::merge_hosts;

constexpr uint64_t kHostB = uint64_t(1) << 44;  // location ids of the second part merged

// nodeB's clock is 7 s behind testhost's, and gains 1000 ppm (offsets measured at 0 and 2 ms).
recorder::ClockMap node_b_clock() {
  recorder::ClockMap m;
  m.start = {7'000'000'000, 250'000, 0, 500'000, 900'000, 200};
  m.end = {7'000'002'000, 300'000, 2'000'000, 600'000, 900'000, 200};
  return m;
}

void write_clock_file(const fs::path& dir, const std::string& host, const std::string& reference,
                      const recorder::ClockMap& m) {
  auto offset = [](const recorder::ClockOffset& o) {
    return nlohmann::json{{"offset_ns", o.offset_ns},
                          {"error_ns", o.error_ns},
                          {"at_ns", o.at_ns},
                          {"rounds", o.rounds}};
  };
  nlohmann::json j = {{"reference", reference},     {"host", host},
                      {"start", offset(m.start)},   {"end", offset(m.end)},
                      {"drift_ppm", m.drift_ppm()}, {"error_ns", m.error_ns()}};
  std::ofstream(dir / "eziotrace-clock.json") << j.dump(1);
}

// Host testhost, the reference (no clock file), and nodeB.
struct Parts {
  fs::path root = test::scratch_dir("merge_hosts");
  fs::path a = root / "a", b = root / "b";
  Parts() {
    fs::create_directories(a);
    fs::create_directories(b);
    test::write_basic_archive(a);
    test::write_basic_archive(b);
    write_clock_file(b, "nodeB", "testhost", node_b_clock());
  }
};

const otf2::Property* node_property(const otf2::Definitions& d, const std::string& node,
                                    const std::string& name) {
  for (const auto& p : d.node_properties) {
    if (d.str(d.nodes.at(p.owner).name) == node && d.str(p.name) == name) return &p;
  }
  return nullptr;
}

TEST(MergeHosts, EachHostOnTheReferenceTimeline) {
  Parts parts;
  const fs::path out = parts.root / "out";
  fs::create_directories(out);
  auto report = merge_hosts({parts.a, parts.b}, out);
  EXPECT_EQ(report.hosts, 2u);
  EXPECT_EQ(report.status, "complete");

  otf2::Archive one = otf2::read_archive(parts.a / "eziotrace.otf2");
  otf2::Archive merged = otf2::read_archive(out / "eziotrace.otf2");
  std::map<std::string, std::string> parent;  // node -> its parent's name
  for (const auto& [id, n] : merged.defs.nodes) {
    auto p = merged.defs.nodes.find(n.parent);
    parent[merged.defs.str(n.name)] =
        p == merged.defs.nodes.end() ? "" : merged.defs.str(p->second.name);
  }
  EXPECT_EQ(parent, (std::map<std::string, std::string>{
                        {"cluster", ""}, {"testhost", "cluster"}, {"nodeB", "cluster"}}));
  ASSERT_EQ(merged.defs.locations.size(), 2 * one.defs.locations.size());

  const recorder::ClockMap clock = node_b_clock();
  uint64_t checked = 0;
  for (const auto& [loc, events] : one.events) {
    ASSERT_EQ(merged.events.at(loc).size(), events.size());
    ASSERT_EQ(merged.events.at(loc + kHostB).size(), events.size());
    for (size_t i = 0; i < events.size(); ++i) {
      EXPECT_EQ(merged.events.at(loc)[i].time, events[i].time);
      const uint64_t mapped = uint64_t(clock.server_time(int64_t(events[i].time)));
      EXPECT_EQ(merged.events.at(loc + kHostB)[i].time, mapped);
      EXPECT_GT(mapped, events[i].time + 7'000'000'000);  // the drift adds to the offset
      ++checked;
    }
  }
  EXPECT_GT(checked, 10u);
  // The hosts' processes under their own nodes, their TIDs kept.
  const auto& b_loc = merged.defs.locations.at(101 + kHostB);
  const auto& b_group = merged.defs.location_groups.at(b_loc.group);
  EXPECT_EQ(merged.defs.str(merged.defs.nodes.at(b_group.node).name), "nodeB");
  EXPECT_EQ(merged.defs.location_property(101 + kHostB, "EZIOTRACE::TID"), 101u);

  const otf2::Definitions& d = merged.defs;
  auto offset = node_property(d, "nodeB", "EZIOTRACE::CLOCK_OFFSET_START_NS");
  ASSERT_NE(offset, nullptr);
  EXPECT_EQ(offset->value.int64, 7'000'000'000);
  EXPECT_EQ(node_property(d, "nodeB", "EZIOTRACE::CLOCK_ERROR_NS")->value.uint64, 300'000u);
  EXPECT_NEAR(node_property(d, "nodeB", "EZIOTRACE::CLOCK_DRIFT_PPM")->value.float64, 1000.0, 1e-6);
  EXPECT_EQ(node_property(d, "testhost", "EZIOTRACE::CLOCK_ERROR_NS")->value.uint64, 0u);
  // Each host's loss counters, and their sum on the root.
  EXPECT_EQ(node_property(d, "nodeB", "EZIOTRACE::LOST::syscall")->value.uint64, 5u);
  EXPECT_EQ(node_property(d, "cluster", "EZIOTRACE::LOST::syscall")->value.uint64, 10u);
  EXPECT_EQ(d.str(node_property(d, "cluster", "EZIOTRACE::HOSTS_STATUS")->value.stringRef),
            "complete");
}

TEST(MergeHosts, ReadStrictlyAndAnalyzedByEveryAnalyzer) {
  Parts parts;
  const fs::path out = parts.root / "cli";
  test::Run r = test::eziotrace({"merge-hosts", parts.a.string(), parts.b.string(), "-o", out});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string anchor = (out / "eziotrace.otf2").string();
  nlohmann::json dump = test::dump_archive(anchor);  // fails the test if python3-otf2 rejects it
  const nlohmann::json one = test::dump_archive(parts.a / "eziotrace.otf2");
  EXPECT_EQ(dump["locations"].size(), 2 * one["locations"].size()) << dump.dump();
  EXPECT_EQ(dump["locations"]["17592186044517"]["calls"][0]["t0"],
            7'000'001'001u);  // 1 << 44 | 101
  for (const char* analyzer : {"profile", "layers", "files", "latency", "collective", "advise"}) {
    test::Run a = test::eziotrace({analyzer, anchor});
    EXPECT_EQ(a.status, 0) << analyzer << ": " << a.err;
  }
  test::Run report =
      test::eziotrace({"report", anchor, "-o", (parts.root / "report.html").string()});
  EXPECT_EQ(report.status, 0) << report.err;
  for (const char* format : {"paje", "perfetto"}) {
    test::Run e = test::eziotrace({"export", anchor, "--format", format, "-o",
                                   (parts.root / (std::string("t.") + format)).string()});
    EXPECT_EQ(e.status, 0) << format << ": " << e.err;
  }
}

// layers --by-host: each host's rows, equal to the one host's archive's.
TEST(MergeHosts, LayersByHost) {
  Parts parts;
  const fs::path out = parts.root / "byhost";
  ASSERT_EQ(test::eziotrace({"merge-hosts", parts.a.string(), parts.b.string(), "-o", out}).status,
            0);
  test::Run one = test::eziotrace({"layers", parts.a.string(), "--json"});
  test::Run by_host = test::eziotrace({"layers", out.string(), "--by-host", "--json"});
  ASSERT_EQ(by_host.status, 0) << by_host.err;
  auto rows_of = [](const std::string& text) { return nlohmann::json::parse(text)["layers"]; };
  const nlohmann::json single = rows_of(one.out), hosts = rows_of(by_host.out);
  std::map<std::string, std::map<std::string, nlohmann::json>> seen;  // host -> layer -> row
  for (auto row : hosts) {
    const std::string host = row["host"];
    row.erase("host");
    seen[host][row["layer"]] = row;
  }
  ASSERT_EQ(seen.size(), 2u) << hosts.dump();
  size_t layers = 0;
  for (const auto& row : single) {
    // The page-cache row of the plain table comes from its samples, which no grouping splits.
    if (!row["writes"].is_number() || (row["reads"] == 0 && row["writes"] == 0) ||
        row["layer"] == "Page cache") {
      continue;
    }
    for (const char* host : {"testhost", "nodeB"}) {
      ASSERT_TRUE(seen[host].count(row["layer"])) << host << " " << row.dump();
      EXPECT_EQ(seen[host][row["layer"]]["writes"], row["writes"]) << host;
      EXPECT_EQ(seen[host][row["layer"]]["write_bytes"], row["write_bytes"]) << host;
    }
    ++layers;
  }
  EXPECT_GE(layers, 2u) << single.dump();
}

TEST(MergeHosts, AMissingPartGivesAPartialArchiveThatSaysWhich) {
  Parts parts;
  const fs::path out = parts.root / "partial";
  const fs::path gone = parts.root / "node3-never-written";
  test::Run r = test::eziotrace(
      {"merge-hosts", parts.a.string(), gone.string(), parts.b.string(), "-o", out});
  EXPECT_EQ(r.status, 4) << r.err;
  EXPECT_NE(r.err.find("node3-never-written"), std::string::npos) << r.err;
  otf2::Archive merged = otf2::read_archive(out / "eziotrace.otf2");
  const otf2::Definitions& d = merged.defs;
  const std::string status =
      d.str(node_property(d, "cluster", "EZIOTRACE::HOSTS_STATUS")->value.stringRef);
  EXPECT_EQ(status.rfind("partial: ", 0), 0u) << status;
  EXPECT_NE(status.find(gone.string() + "): no such file or directory"), std::string::npos)
      << status;
  EXPECT_EQ(node_property(d, "cluster", "EZIOTRACE::HOSTS_MISSING")->value.uint64, 1u);
  EXPECT_EQ(node_property(d, "cluster", "EZIOTRACE::HOSTS")->value.uint64, 2u);
  test::dump_archive(out / "eziotrace.otf2");
}

TEST(MergeHosts, PartsThatCannotBeMergedAreNamedWithTheirReason) {
  Parts parts;
  // A third part measured against another reference, and a fourth of nodeB again (merged).
  fs::path c = parts.root / "c", b2 = parts.root / "b2";
  for (const auto& dir : {c, b2}) {
    fs::create_directories(dir);
    test::write_basic_archive(dir);
  }
  write_clock_file(c, "nodeC", "elsewhere", node_b_clock());
  write_clock_file(b2, "nodeB", "testhost", node_b_clock());
  auto report = merge_hosts({parts.a, parts.b, c, b2}, parts.root / "out4");
  EXPECT_EQ(report.hosts, 2u);
  EXPECT_NE(report.status.find("nodeC (" + c.string() +
                               "): its clock was measured against "
                               "elsewhere, the other parts' against testhost"),
            std::string::npos)
      << report.status;
  // A second part of nodeB is another task of that host, merged under its node
  // (merge_hosts_tasks_test.cpp).
  EXPECT_EQ(report.status.find("nodeB ("), std::string::npos) << report.status;
}

TEST(MergeHosts, NoPartToMergeFailsAndWritesNothing) {
  Parts parts;
  fs::remove(parts.a / "eziotrace.otf2");  // a directory without an archive
  const fs::path out = parts.root / "none";
  test::Run r = test::eziotrace(
      {"merge-hosts", parts.a.string(), (parts.root / "missing").string(), "-o", out});
  EXPECT_GT(r.status, 0);
  EXPECT_LT(r.status, 128);
  EXPECT_NE(r.err.find("no part can be merged"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace
}  // namespace ezio
