// SPDX-License-Identifier: GPL-2.0-only
// The merge on a real EZTrace run of mpi_io under mpirun in EZTrace's MPI mode, with a
// synthesized kernel archive: the ranks' shared archive, their clocks, communicators and MPI
// events.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "merge_fixture.h"
#include "run.h"

namespace ezio::test {
namespace {

TEST(MergeMpi, RanksShareOneArchiveEachWithItsOwnLocationAndClock) {
  const auto& f = mpi_traced_run();
  ASSERT_EQ(f.pid_of_rank.size(), 2u) << f.app_out;
  ASSERT_EQ(f.inputs.size(), 2u);
  EXPECT_EQ(f.inputs[0].archive, f.inputs[1].archive);  // one eztrace_log.otf2 for both ranks
  std::set<uint32_t> pids;
  std::set<OTF2_LocationRef> locations;
  for (const auto& in : f.inputs) {
    pids.insert(in.process.pid);
    EXPECT_EQ(in.process.program, "mpi_io");
    ASSERT_EQ(in.locations.size(), 1u);
    EXPECT_TRUE(locations.insert(in.locations[0]).second);
    // EZTrace stamps MPI mode with MPI_Wtime; the helper measured it against CLOCK_MONOTONIC.
    EXPECT_EQ(in.process.clock, "MPI_Wtime");
    EXPECT_LE(in.process.clock_offset_error_ns, 1u) << "root reads /proc/timer_list: exact";
    EXPECT_NE(in.process.time_offset(), in.process.first_timestamp);
  }
  EXPECT_EQ(pids, (std::set<uint32_t>{f.pid_of_rank.at(0), f.pid_of_rank.at(1)}));
}

// One host's part of a multi-node job (docs/cluster.md) has the alignment data of its own ranks
// only: a rank alone in the merge owns its own locations, not the whole shared archive.
TEST(MergeMpi, ARankMergedAloneOwnsOnlyItsOwnLocations) {
  const auto& f = mpi_traced_run();
  ASSERT_EQ(f.inputs.size(), 2u);
  for (const auto& image : converters::read_sidecars(f.setup.sidecar_dir)) {
    if (!image.exited) continue;
    std::vector<std::string> warnings;
    auto in = converters::load_eztrace_inputs(
                  {image},
                  [](const converters::Sidecar& s) {
                    return std::vector{s.trace_dir() / "eztrace_log.otf2"};
                  },
                  warnings, f.dir)
                  .traces;
    ASSERT_EQ(in.size(), 1u) << image.pid;
    std::vector<OTF2_LocationRef> own;
    for (const auto& t : image.threads) own.push_back(t.location);
    EXPECT_EQ(in[0].locations, own) << image.pid;
    EXPECT_EQ(in[0].locations.size(), 1u) << image.pid;
  }
}

// The other rank's locations belong to no process of a rank's merge alone: said, unless they are
// known to be another part's (converters/cluster/user_layers.cpp gives each host's merge the
// other hosts' ranks), as a rank whose part is missing is still said to be left out.
TEST(MergeMpi, ARankMergedAloneSaysNothingOfRanksKnownElsewhere) {
  const auto& f = mpi_traced_run();
  std::vector<converters::Sidecar> images;
  for (auto& image : converters::read_sidecars(f.setup.sidecar_dir)) {
    if (image.exited) images.push_back(std::move(image));
  }
  ASSERT_EQ(images.size(), 2u);
  auto left_out = [&](const converters::Sidecar& image, const std::set<OTF2_LocationRef>& known) {
    std::vector<std::string> warnings;
    converters::load_eztrace_inputs(
        {image},
        [](const converters::Sidecar& s) {
          return std::vector{s.trace_dir() / "eztrace_log.otf2"};
        },
        warnings, f.dir, known);
    return std::count_if(warnings.begin(), warnings.end(), [](const std::string& w) {
      return w.find("belongs to no process") != std::string::npos;
    });
  };
  for (size_t i = 0; i < 2; ++i) {
    std::set<OTF2_LocationRef> other;
    for (const auto& t : images[1 - i].threads) other.insert(t.location);
    EXPECT_EQ(left_out(images[i], {}), long(other.size())) << images[i].pid;
    EXPECT_EQ(left_out(images[i], other), 0) << images[i].pid;
  }
}

TEST(MergeMpi, MergedRanksAreAlignedAndKeepTheirCommunicators) {
  const auto& f = mpi_traced_run();
  ASSERT_EQ(f.inputs.size(), 2u);
  auto m = merge_with_synthetic("mpi_merged", 0, f);
  EXPECT_EQ(m.report.violations, 0u)
      << (m.report.violation_details.empty() ? "" : m.report.violation_details.front());
  // Per rank: open, write, close, open, read, close.
  EXPECT_EQ(m.report.checked_calls, 2u * 6u);
  EXPECT_EQ(m.report.unsupported_events, 0u);  // MPI events are carried
  EXPECT_EQ(m.report.processes, 2u);
  const auto& d = m.archive.defs;
  EXPECT_EQ(d.duplicate_definitions, 0u);
  expect_dense_ids(d.groups, "group");
  expect_dense_ids(d.comms, "comm");
  // The ranks, in order, as the kernel's thread locations (TID = PID of each rank).
  ASSERT_FALSE(d.groups.empty());
  EXPECT_EQ(d.groups[0].type, OTF2_GROUP_TYPE_COMM_LOCATIONS);
  std::vector<uint64_t> ranks = {f.pid_of_rank.at(0), f.pid_of_rank.at(1)};
  EXPECT_EQ(d.groups[0].members, ranks);
  const converters::CommDef* world = comm_named(d, "MPI_COMM_WORLD");
  ASSERT_NE(world, nullptr);
  EXPECT_EQ(d.groups.at(world->group_index).members, (std::vector<uint64_t>{0, 1}));

  // python3-otf2 reads the MPI events with their communicator and resolves the peers.
  auto py =
      run({"/usr/bin/python3", EZIO_TEST_SUPPORT_DIR "/otf2_dump.py", "--mpi", m.anchor.string()});
  ASSERT_EQ(py.status, 0) << py.err;
  auto j = nlohmann::json::parse(py.out);
  EXPECT_TRUE(j["warnings"].empty()) << j["warnings"];
  std::map<std::string, int> kinds;
  for (const auto& e : j["events"]) {
    std::string k = e["k"];
    ++kinds[k];
    if (e.contains("comm")) {
      EXPECT_EQ(e["comm"], "MPI_COMM_WORLD");
      EXPECT_EQ(e["members"], nlohmann::json(ranks));
    }
    if (k == "MpiSend") {
      EXPECT_EQ(e["loc"], ranks[0]);
      EXPECT_EQ(e["peer"], ranks[1]);
    }
    if (k == "MpiRecv") {
      EXPECT_EQ(e["loc"], ranks[1]);
      EXPECT_EQ(e["peer"], ranks[0]);
    }
  }
  EXPECT_EQ(
      kinds,
      (std::map<std::string, int>{
          {"MpiCollectiveBegin", 2}, {"MpiCollectiveEnd", 2}, {"MpiRecv", 1}, {"MpiSend", 1}}));
  ezio::test::Run p = run({"otf2-print", "-A", m.anchor.string()});
  EXPECT_EQ(p.status, 0);
  EXPECT_EQ(p.err, "");
}

TEST(MergeMpi, UserEventsEqualEztraceOneForOne) {
  const auto& f = mpi_traced_run();
  ASSERT_EQ(f.inputs.size(), 2u);
  auto m = merge_with_synthetic("mpi_one_for_one", 0, f);
  for (const auto& in : f.inputs) {
    const auto& t = in.process.threads.at(0);
    Sequence want, got;
    const converters::Archive original = converters::read_archive(in.archive->anchor);
    for (const auto& e : original.events.at(t.location)) {
      want.emplace_back(converters::event_kind_name(e.kind), describe(in.archive->defs, e));
    }
    auto mev = m.archive.events.find(t.tid);
    ASSERT_NE(mev, m.archive.events.end()) << "tid " << t.tid;
    for (const auto& e : mev->second) {
      if (converters::is_user_event(m.archive.defs, e)) {
        got.emplace_back(converters::event_kind_name(e.kind), describe(m.archive.defs, e));
      }
    }
    EXPECT_EQ(got, want) << "rank of pid " << in.process.pid;
  }
}

}  // namespace
}  // namespace ezio::test
