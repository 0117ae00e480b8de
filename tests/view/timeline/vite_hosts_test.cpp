// SPDX-License-Identifier: GPL-2.0-only
// ViTE on an archive of several hosts as `eziotrace merge-hosts` assembles it (the parts' event
// files linked as they are, their ids and clocks mapped by OTF2's local definitions): one MPI job
// of two ranks on two hosts (tests/support/synthetic_mpi.h), its communicators unified, the second
// host's clock 1 us behind. ViTE 1.2 reads it without an error, draws both hosts' rows, and puts
// the second host's calls where its clock offsets say. Only the job's collective is kept:
// ViTE 1.2 crashes on the point-to-point events of any standard-conformant archive (it takes a
// communicator's rank for a location id: docs/merge.md, "Readers"), which no archive of ours
// can avoid.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <map>
#include <regex>

#include "run.h"
#include "synthetic_mpi.h"
#include "vite_rows.h"
#include "vite_window.h"

namespace fs = std::filesystem;

namespace {

constexpr uint64_t kHostB = uint64_t(1) << 44;  // location ids of merge-hosts' second part
constexpr int64_t kOffsetNs = 1000;             // node2's events this much later on node1's clock

// The left edges of the states ViTE's SVG export draws, per row (by its top), left to right.
std::map<double, std::vector<double>> state_edges(const std::string& svg) {
  std::map<double, std::vector<double>> rows;
  const size_t states = svg.find("<g clip-path=\"url(#stateArea)\"><rect");
  if (states == std::string::npos) return rows;
  const std::string area = svg.substr(states, svg.find("</g>", states) - states);
  static const std::regex rect(R"re(<rect x="([0-9.]+)" y="([0-9.]+)")re");
  for (std::sregex_iterator it(area.begin(), area.end(), rect), end; it != end; ++it) {
    rows[std::stod((*it)[2])].push_back(std::stod((*it)[1]));
  }
  for (auto& [y, xs] : rows) std::sort(xs.begin(), xs.end());
  return rows;
}

TEST(ViewHosts, ViteDrawsBothHostsOfAnAssembledArchive) {
  const fs::path dir = ezio::test::scratch_dir("view-hosts");
  const fs::path a = ezio::test::write_mpi_part(dir / "node1", "node1", 0, false);
  const fs::path b = ezio::test::write_mpi_part(dir / "node2", "node2", 1, false, kOffsetNs);
  const fs::path out = dir / "job";
  auto merge = ezio::test::eziotrace({"merge-hosts", a.string(), b.string(), "-o", out.string()});
  ASSERT_EQ(merge.status, 0) << merge.out << merge.err;
  // Assembled: the rank's event file is the part's own, linked.
  const fs::path rank1 = out / "eziotrace" / (std::to_string(200 + kHostB) + ".evt");
  struct stat st {};
  ASSERT_EQ(stat(rank1.c_str(), &st), 0) << rank1;
  EXPECT_EQ(st.st_nlink, 2u) << "the part's event file is not linked: not assembled";

  const fs::path anchor = out / "eziotrace.otf2";
  const std::string svg = ezio::test::vite_svg(anchor, dir / "hosts.svg");
  std::vector<std::string> labels;
  for (const auto& box : ezio::test::leaf_boxes(svg)) labels.push_back(box.label);
  EXPECT_EQ(labels, (std::vector<std::string>{"app [200]_200",
                                              "app [200]_" + std::to_string(200 + kHostB)}))
      << "one row per rank, each host's, no stand-in of the other host's rank";
  // Each rank's open (400-500 on its clock) and barrier (5000-5100): node2's open starts 1 us
  // after node1's, out of the 4.6 us between node1's open and barrier.
  auto rows = state_edges(svg);
  ASSERT_EQ(rows.size(), 2u) << svg;
  const std::vector<double>& one = rows.begin()->second;
  const std::vector<double>& two = rows.rbegin()->second;
  ASSERT_EQ(one.size(), 2u) << svg;
  ASSERT_EQ(two.size(), 2u) << svg;
  EXPECT_NEAR((two[0] - one[0]) / (one[1] - one[0]), double(kOffsetNs) / 4600, 0.02)
      << "node2's states are not where its clock offsets put them: " << svg;
  auto shot = ezio::test::screenshot(anchor, dir / "hosts.png");
  EXPECT_GT(ezio::test::pixels_near(shot, {0, 0, 153}), 100) << "no container drawn";
  auto heights = ezio::test::leaf_box_heights(dir / "hosts.png");
  ASSERT_EQ(heights.size(), labels.size())
      << "ViTE's window does not show both hosts' rows: " << (dir / "hosts.png");
  for (int h : heights) EXPECT_GT(h, 5) << (dir / "hosts.png");
}

}  // namespace
