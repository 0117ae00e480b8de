// SPDX-License-Identifier: GPL-2.0-only
// Every rule of `eziotrace advise` on two small archives written here: one where it fires, one
// where it does not, in each of advise's outputs (text and --json). Thresholds are lowered with
// --config so that a few calls make the case.
#include "analysis/analyzers/advise_rules.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "tests/support/run_cli.h"
#include "tests/support/trace_builder.h"
#include "tests/unit/analysis/advise_hpc_cases.h"
#include "tests/unit/analysis/test_util.h"

namespace ezio::test {
namespace {

using nlohmann::json;

struct RuleCase {
  const char* rule;
  const char* title;  // in the text output when it fires
  json config;
  void (*build)(TraceBuilder& b, bool fire);
};

void lost_events(TraceBuilder& b, bool fire) {
  b.rw(101, 1000, 1100, b.file("/data/a", 3), true, 4096);
  if (fire) b.lost("syscall", 3);
}

void incomplete(TraceBuilder& b, bool fire) {
  b.rw(101, 1000, 1100, b.file("/data/a", 3), true, 4096);
  if (fire) b.status("interrupted");
}

void small_requests(TraceBuilder& b, bool fire) {
  otf2::Ref f = b.file("/data/out", 3);
  b.open(101, 500, 600, f);
  for (uint64_t i = 0; i < 5; ++i)
    b.rw(101, 1000 + 100 * i, 1050 + 100 * i, f, true, fire ? 100 : 131072);
}

void random_access(TraceBuilder& b, bool fire) {
  otf2::Ref f = b.file("/data/db", 3);
  const int64_t random[] = {8192, 0, 16384, 4096}, in_order[] = {0, 4096, 8192, 12288};
  for (uint64_t i = 0; i < 4; ++i)
    b.rw(101, 1000 + 100 * i, 1050 + 100 * i, f, true, 4096, (fire ? random : in_order)[i]);
}

void read_modify_write(TraceBuilder& b, bool fire) {
  otf2::Ref f = b.file("/data/rec", 3);
  uint64_t size = fire ? 100 : 4096, ids[3];
  for (uint64_t i = 0; i < 3; ++i)
    ids[i] =
        b.rw(101, 1000 + 100 * i, 1050 + 100 * i, f, true, size, static_cast<int64_t>(i * size));
  b.block(1110, 1140, false, 4096, 2048, ids[1]);  // the page read inside the second write
}

void sync_cost(TraceBuilder& b, bool fire) {
  otf2::Ref f = b.file("/data/journal", 3);
  for (uint64_t i = 0; i < 3; ++i) {
    uint64_t t = 1000 + 20000 * i;
    b.rw(101, t, t + 100, f, true, fire ? 100 : 4 << 20);
    b.call(101, "fsync", t + 200, t + (fire ? 10200 : 210), f);
  }
}

void cache_read_misses(TraceBuilder& b, bool fire) {
  b.rw(101, 1000, 1100, b.file("/data/in", 3), false, 65536);
  b.pagecache(1200, 101, fire ? 2 : 100, 10);
}

void readahead_waste(TraceBuilder& b, bool fire) {
  b.rw(101, 1000, 1100, b.file("/data/in", 3), false, 4096);
  b.block(1010, 1090, false, fire ? 65536 : 4096, 2048);
}

void dirty_throttling(TraceBuilder& b, bool fire) {
  b.rw(101, 1000, 2000, b.file("/data/out", 3), true, 65536);
  b.throttle(101, 3000, fire ? 3500 : 3001);
}

void device_saturated(TraceBuilder& b, bool fire) {
  b.rw(101, 500, 600, b.file("/data/out", 3), true, 65536);
  for (uint64_t i = 0; i < 4; ++i) {
    if (fire) {
      b.block(1000, 2000 + 100 * i, true, 4096, 2048 + 8 * i, 0, 900, 100);
    } else {
      b.block(1000 + 200 * i, 1100 + 200 * i, true, 4096, 2048 + 8 * i, 0, 10, 90);
    }
  }
}

void metadata_storm(TraceBuilder& b, bool fire) {
  for (uint64_t i = 0; i < 10; ++i)
    b.call(101, "newfstatat", 1000 + 2000 * i, 1000 + 2000 * i + (fire ? 1000 : 1));
  b.rw(101, 30000, fire ? 30100 : 130000, b.file("/data/out", 3), true, 65536);
}

void useless_buffering(TraceBuilder& b, bool fire) {
  otf2::Ref f = b.file("/data/log", 3);
  for (uint64_t i = 0; i < 5; ++i)
    b.fwrite(101, 1000 + 100 * i, 1050 + 100 * i, f, 80, fire || i == 4);
}

void reopened_files(TraceBuilder& b, bool fire) {
  for (int i = 0; i < (fire ? 3 : 2); ++i) {
    otf2::Ref f = b.file("/data/step", 3);
    uint64_t t = 1000 + 1000 * static_cast<uint64_t>(i);
    b.open(101, t, t + 10, f);
    b.rw(101, t + 20, t + 30, f, true, 4096);
    b.call(101, "close", t + 40, t + 50);
  }
}

void thread_interference(TraceBuilder& b, bool fire) {
  const uint64_t slow[] = {100, 1000, 1000}, even[] = {100, 100, 100};
  for (uint64_t tid : {101, 102}) {
    otf2::Ref f = b.file(tid == 101 ? "/data/a" : "/data/b", static_cast<int>(tid));
    uint64_t t = 1000 + (tid - 101) * 50;
    for (uint64_t d : fire ? slow : even) {
      b.rw(tid, t, t + d, f, true, 4096);
      t += d + 100;
    }
  }
}

const RuleCase kCases[] = {
    {"lost-events", "Events were lost while recording", json::object(), lost_events},
    {"incomplete-recording", "The recording is interrupted", json::object(), incomplete},
    {"small-requests", "small I/O requests", {{"small_min_count", 4}}, small_requests},
    {"random-access", "Random access to a file", {{"random_min_accesses", 4}}, random_access},
    {"read-modify-write",
     "Misaligned writes turn into read-modify-write",
     {{"rmw_min_writes", 2}, {"rmw_min_reads", 1}},
     read_modify_write},
    {"sync-cost", "fsync/fdatasync take a large share", {{"sync_min_count", 2}}, sync_cost},
    {"cache-read-misses",
     "Reads miss the page cache",
     {{"read_miss_min_pages", 4}},
     cache_read_misses},
    {"readahead-waste",
     "Readahead did not help",
     {{"readahead_waste_min_bytes", 0}},
     readahead_waste},
    {"dirty-throttling", "Writes were throttled", json::object(), dirty_throttling},
    {"device-saturated",
     "The device is saturated",
     {{"saturation_min_requests", 4}, {"saturation_depth", 2}},
     device_saturated},
    {"metadata-storm",
     "Metadata storm",
     {{"metadata_min_count", 5}, {"metadata_rate", 1e12}},
     metadata_storm},
    {"useless-buffering",
     "User-level buffering does nothing",
     {{"stdio_min_calls", 4}},
     useless_buffering},
    {"reopened-files",
     "The same file is opened again and again",
     {{"reopen_min_count", 3}},
     reopened_files},
    {"thread-interference",
     "Threads slow each other down",
     {{"sci_min_calls", 3}},
     thread_interference},
    {"mpiio-small-independent",
     "Small independent MPI-IO accesses",
     {{"mpiio_small_min_count", 4}},
     mpiio_small_independent},
    {"collective-small-requests",
     "Collective MPI-IO still reached the file system",
     {{"collective_min_requests", 4}},
     collective_small_requests},
    {"shared-file-pointer",
     "Shared-file-pointer operations serialise the ranks",
     {{"shared_pointer_min_calls", 4}},
     shared_file_pointer},
    {"hdf5-small-writes",
     "HDF5 dataset written in many small H5Dwrite",
     {{"hdf5_small_min_writes", 4}},
     hdf5_small_writes},
    {"hdf5-small-chunks", "HDF5 chunks smaller than", json::object(), hdf5_small_chunks},
    {"hdf5-metadata",
     "HDF5 metadata I/O takes a large share",
     {{"hdf5_metadata_min_ops", 3}},
     hdf5_metadata},
};

// The case's name in test names and messages (ctest's names must not change between runs).
void PrintTo(const RuleCase& c, std::ostream* os) { *os << c.rule; }

class AdviseRule : public ::testing::TestWithParam<RuleCase> {};

TEST_P(AdviseRule, FiresOnlyWhereItShould) {
  const RuleCase& c = GetParam();
  for (bool fire : {true, false}) {
    SCOPED_TRACE(fire ? "archive where it fires" : "archive where it does not");
    TempDir dir;
    TraceBuilder b(dir / "trace");
    c.build(b, fire);
    std::string anchor = b.close().string();
    std::string config = (dir / "thresholds.json").string();
    std::ofstream(config) << c.config.dump();

    RunResult text = run({cli_path(), "advise", anchor, "--config", config});
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_EQ(text.out.find(c.title) != std::string::npos, fire) << text.out;

    RunResult js = run({cli_path(), "advise", anchor, "--config", config, "--json"});
    ASSERT_EQ(js.exit_code, 0) << js.err;
    json j = json::parse(js.out);
    size_t found = 0;
    for (auto& f : j["findings"]) found += f["rule"] == c.rule;
    EXPECT_EQ(found, fire ? 1u : 0u) << j["findings"].dump(2);
    EXPECT_NE(std::find(j["rules"].begin(), j["rules"].end(), c.rule), j["rules"].end());
    for (auto& [name, value] : c.config.items()) EXPECT_EQ(j["thresholds"][name], value);
  }
}

INSTANTIATE_TEST_SUITE_P(Advise, AdviseRule, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<RuleCase>& i) {
                           std::string n = i.param.rule;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

// A rule added to the table without a case here fails this test.
TEST(AdviseRules, EveryRuleHasACase) {
  std::set<std::string> tested;
  for (const RuleCase& c : kCases) tested.insert(c.rule);
  std::set<std::string> thresholds;
  for (const analysis::Rule& r : analysis::advise_rules()) {
    EXPECT_TRUE(tested.contains(std::string(r.name))) << r.name;
    for (auto& t : r.thresholds) {
      EXPECT_TRUE(thresholds.insert(std::string(t.name)).second) << "read by two rules: " << t.name;
    }
  }
  EXPECT_EQ(tested.size(), analysis::advise_rules().size());
  EXPECT_EQ(analysis::Thresholds().values.size(), thresholds.size());
}

}  // namespace
}  // namespace ezio::test
