// SPDX-License-Identifier: GPL-2.0-only
// Exact answers of the analyzers on the synthetic archive of synthetic.cpp. Durations are in ns
// (resolution 1e9), so seconds below are ns * 1e-9.
#include <gtest/gtest.h>

#include <fstream>

#include "analysis/analyzers/files.h"
#include "analysis/analyzers/histogram.h"
#include "analysis/analyzers/latency.h"
#include "analysis/analyzers/layers.h"
#include "analysis/analyzers/profile.h"
#include "common/error.h"
#include "tests/support/run_cli.h"
#include "tests/support/synthetic.h"
#include "tests/support/trace_builder.h"
#include "tests/unit/analysis/test_util.h"

namespace ezio::test {
namespace {

using analysis::GroupBy;
using nlohmann::json;

constexpr double kNs = 1e-9;

class Basic : public ::testing::Test {
 protected:
  void SetUp() override { anchor_ = write_basic_archive(dir_ / "trace"); }
  TempDir dir_;
  std::filesystem::path anchor_;
};

TEST_F(Basic, Profile) {
  analysis::ProfileOptions o;
  o.common.trace = anchor_.string();
  json j = as_json(analysis::run_profile(o));
  auto& t = j["profile"];
  // Thread 101: writes of 400, 200 and 100 ns; the first contains a 200 ns vfs_write.
  json w = find_row(t, {{"thread", "app [101]"}, {"function", "write"}});
  ASSERT_FALSE(w.is_null());
  EXPECT_EQ(w["layer"], "syscall");
  EXPECT_EQ(w["count"], 3);
  EXPECT_DOUBLE_EQ(w["inclusive_s"].get<double>(), 700 * kNs);
  EXPECT_DOUBLE_EQ(w["exclusive_s"].get<double>(), 500 * kNs);
  EXPECT_DOUBLE_EQ(w["min_s"].get<double>(), 100 * kNs);
  EXPECT_DOUBLE_EQ(w["max_s"].get<double>(), 400 * kNs);
  EXPECT_NEAR(w["average_s"].get<double>(), 700.0 / 3 * kNs, 1e-15);
  EXPECT_EQ(w["bytes"], 8292);
  // Runtime of thread 101: 1000..6050 ns.
  EXPECT_NEAR(w["percent_runtime"].get<double>(), 100.0 * 700 / 5050, 1e-9);
  // 4096-byte class: best 200 ns per 4096 B, so best total 400; 100-byte class: 100.
  EXPECT_NEAR(w["sci"].get<double>(), (700.0 - 500.0) / 700.0, 1e-12);
  // Sorted by inclusive time: pread64 (800) first.
  json first = nullptr;
  for (auto& row : t) {
    if (row["thread"] == "app [101]") {
      first = row;
      break;
    }
  }
  EXPECT_EQ(first["function"], "pread64");
  json v = find_row(t, {{"thread", "app [101]"}, {"function", "vfs_write"}});
  EXPECT_EQ(v["layer"], "vfs");
  EXPECT_DOUBLE_EQ(v["inclusive_s"].get<double>(), 200 * kNs);
  EXPECT_EQ(v["sci"], 0.0);
  // The fs point is counted with its bytes but has no duration: not a 0 ns call.
  json fs = find_row(t, {{"thread", "app [101]"}, {"function", "xfs_file_buffered_read"}});
  EXPECT_EQ(fs["count"], 1);
  EXPECT_EQ(fs["bytes"], 8192);
  EXPECT_EQ(fs["inclusive_s"], 0.0);
  EXPECT_DOUBLE_EQ(
      find_row(t, {{"thread", "app [101]"}, {"function", "pread64"}})["exclusive_s"].get<double>(),
      800 * kNs);
  // All threads: the 600 ns write of thread 102 joins the 4096..1000 classes: 1000 B is in
  // [512, 1024), alone, so its best time is itself.
  json all = find_row(t, {{"thread", "All threads"}, {"function", "write"}});
  EXPECT_EQ(all["count"], 4);
  EXPECT_DOUBLE_EQ(all["inclusive_s"].get<double>(), 1300 * kNs);
  EXPECT_NEAR(all["sci"].get<double>(), 200.0 / 1300.0, 1e-12);
  // The device's time is no thread's: All threads' runtime is the two threads'.
  EXPECT_NEAR(all["percent_runtime"].get<double>(), 100.0 * 1300 / (5050 + 600), 1e-9);
  EXPECT_EQ(j["meta"]["lost_events"]["syscall"], 5);
  EXPECT_TRUE(find_row(t, {{"thread", "block sda"}}).is_null());
  // The block request, timed from creation to completion, in the devices' table; busy over the
  // recording (1000..6050 ns).
  json blk = find_row(j["devices"], {{"device", "block sda"}, {"request", "write"}});
  EXPECT_EQ(blk["count"], 1);
  EXPECT_EQ(blk["bytes"], 4096);
  EXPECT_DOUBLE_EQ(blk["request_s"].get<double>(), 1000 * kNs);
  EXPECT_DOUBLE_EQ(blk["busy_s"].get<double>(), 1000 * kNs);
  EXPECT_NEAR(blk["busy_percent"].get<double>(), 100.0 * 1000 / 5050, 1e-9);
}

// Overlapping requests: their durations add up past the time they took (the "120 % runtime" of
// issue #27); busy time counts the overlap once, and no figure is a share of a thread's runtime.
TEST(ProfileDevices, OverlappingRequestsAreNotThreadTime) {
  TempDir dir;
  TraceBuilder b(dir / "trace");
  b.rw(101, 0, 100, b.file("/data/a", 3), true, 8192);
  b.rw(101, 9900, 10000, b.file("/data/b", 4), true, 8192);
  b.block(1000, 3000, true, 4096, 0);
  b.block(2000, 4000, true, 4096, 8);
  b.block(5000, 6000, false, 4096, 64);
  analysis::ProfileOptions o;
  o.common.trace = b.close().string();
  json j = as_json(analysis::run_profile(o));
  for (auto& row : j["profile"]) {
    EXPECT_NE(row["thread"], "block sda");
    EXPECT_LE(row["percent_runtime"].get<double>(), 100.0) << row.dump();
  }
  json w = find_row(j["devices"], {{"device", "block sda"}, {"request", "write"}});
  EXPECT_EQ(w["count"], 2);
  EXPECT_DOUBLE_EQ(w["request_s"].get<double>(), 4000 * kNs);  // 2000 + 2000, overlapping
  EXPECT_DOUBLE_EQ(w["busy_s"].get<double>(), 3000 * kNs);     // 1000..4000
  EXPECT_NEAR(w["busy_percent"].get<double>(), 30.0, 1e-9);    // of 0..10000
  EXPECT_NEAR(w["in_flight"].get<double>(), 4.0 / 3, 1e-9);
  json all = find_row(j["devices"], {{"device", "block sda"}, {"request", "all requests"}});
  EXPECT_EQ(all["count"], 3);
  EXPECT_DOUBLE_EQ(all["busy_s"].get<double>(), 4000 * kNs);  // 1000..4000 and 5000..6000
  EXPECT_NEAR(all["busy_percent"].get<double>(), 40.0, 1e-9);
  RunResult r = run({cli_path(), "profile", o.common.trace});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Block devices (device time, not any thread's)"), std::string::npos);
  EXPECT_NE(r.out.find("Busy % of recording"), std::string::npos);
}

TEST_F(Basic, ProfileFilters) {
  analysis::ProfileOptions o;
  o.common.trace = anchor_.string();
  o.common.filters.threads = {"102"};
  json t = as_json(analysis::run_profile(o))["profile"];
  ASSERT_EQ(t.size(), 2u);  // thread 102 and the total, one write each
  for (auto& row : t) EXPECT_EQ(row["count"], 1);
  o.common.filters.threads.clear();
  o.common.filters.layers = {"vfs"};
  t = as_json(analysis::run_profile(o))["profile"];
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0]["function"], "vfs_write");
  o.common.filters.layers.clear();
  o.common.filters.regions = {"pread"};
  t = as_json(analysis::run_profile(o))["profile"];
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0]["function"], "pread64");
  o.common.filters.regions.clear();
  o.common.filters.layers = {"nonsense"};
  EXPECT_THROW(analysis::run_profile(o), ezio::Error);
}

TEST_F(Basic, Layers) {
  analysis::LayersOptions o;
  o.common.trace = anchor_.string();
  json j = as_json(analysis::run_layers(o));
  auto& t = j["layers"];
  ASSERT_EQ(t.size(), 8u);  // HDF5 and MPI-IO (not observed) above User
  json sc = find_row(t, {{"layer", "Syscall"}});
  EXPECT_EQ(sc["reads"], 1);
  EXPECT_EQ(sc["writes"], 4);
  EXPECT_EQ(sc["other"], 2);
  EXPECT_EQ(sc["read_bytes"], 8192);
  EXPECT_EQ(sc["write_bytes"], 9292);
  EXPECT_DOUBLE_EQ(sc["total_s"].get<double>(), 2250 * kNs);
  EXPECT_DOUBLE_EQ(sc["mean_s"].get<double>(), 2250.0 / 7 * kNs);
  json vfs = find_row(t, {{"layer", "VFS"}});
  EXPECT_EQ(vfs["writes"], 1);
  EXPECT_DOUBLE_EQ(vfs["p50_s"].get<double>(), 200 * kNs);  // a single value is exact
  json blk = find_row(t, {{"layer", "Block"}});
  EXPECT_EQ(blk["writes"], 1);
  EXPECT_EQ(blk["write_bytes"], 4096);
  EXPECT_DOUBLE_EQ(blk["total_s"].get<double>(), 1000 * kNs);
  EXPECT_EQ(find_row(t, {{"layer", "User"}})["reads"], 0);
  json fs = find_row(t, {{"layer", "FS"}});
  EXPECT_EQ(fs["reads"], 1);
  EXPECT_EQ(fs["read_bytes"], 8192);
  EXPECT_EQ(fs["total_s"], 0.0);
  EXPECT_EQ(fs["p50_s"], 0.0);  // points are not latencies
  json cw = find_row(j["cache"], {{"operation", "write"}});
  EXPECT_EQ(cw["source_layer"], "syscall");
  EXPECT_EQ(cw["app_bytes"], 9292);
  EXPECT_EQ(cw["block_bytes"], 4096);
  EXPECT_EQ(cw["absorbed_bytes"], 9292 - 4096);
  EXPECT_NEAR(cw["percent_to_block"].get<double>(), 100.0 * 4096 / 9292, 1e-9);
  json cr = find_row(j["cache"], {{"operation", "read"}});
  EXPECT_EQ(cr["absorbed_bytes"], 8192);
  // Page cache: a thread's last sample holds its totals; two threads share their process's
  // page-cache location.
  ASSERT_EQ(j["pagecache"].size(), 3u);
  json pc = find_row(j["pagecache"], {{"thread", "pagecache app [101]"}});
  EXPECT_EQ(pc["hits"], 30);
  EXPECT_EQ(pc["misses"], 10);
  EXPECT_EQ(pc["dirtied"], 5);
  EXPECT_EQ(pc["evicted"], 0);
  EXPECT_DOUBLE_EQ(pc["hit_percent"].get<double>(), 75.0);
  json pc102 = find_row(j["pagecache"], {{"thread", "pagecache app [102]"}});
  EXPECT_EQ(pc102["hits"], 4);
  EXPECT_EQ(pc102["dirtied"], 2);
  EXPECT_EQ(find_row(j["pagecache"], {{"thread", "All threads"}})["hits"], 34);
  // The layer row gives the pages of those counters (no PROBE property: counts, not "not
  // observed").
  json pc_row = find_row(t, {{"layer", "Page cache"}});
  EXPECT_EQ(pc_row["writes"], 7);
  EXPECT_EQ(pc_row["write_bytes"], 7 * 4096);
}

TEST_F(Basic, LayersGrouped) {
  analysis::LayersOptions o;
  o.common.trace = anchor_.string();
  o.group = GroupBy::kThread;
  json t = as_json(analysis::run_layers(o))["layers"];
  EXPECT_EQ(find_row(t, {{"thread", "app [102]"}, {"layer", "Syscall"}})["writes"], 1);
  EXPECT_EQ(find_row(t, {{"thread", "app [101]"}, {"layer", "Syscall"}})["writes"], 3);
  EXPECT_EQ(find_row(t, {{"thread", "block sda"}, {"layer", "Block"}})["writes"], 1);
  EXPECT_EQ(t.size(), 5u);  // 101 syscall+vfs+fs, 102 syscall, sda block
  o.group = GroupBy::kProcess;
  t = as_json(analysis::run_layers(o))["layers"];
  EXPECT_EQ(find_row(t, {{"process", "app [100]"}, {"layer", "Syscall"}})["writes"], 4);
  o.group = GroupBy::kFile;
  t = as_json(analysis::run_layers(o))["layers"];
  EXPECT_EQ(find_row(t, {{"file", "/data/a"}, {"layer", "Syscall"}})["write_bytes"], 8292);
  EXPECT_EQ(find_row(t, {{"file", "/data/a"}, {"layer", "VFS"}})["writes"], 1);
  EXPECT_EQ(find_row(t, {{"file", "/data/b"}, {"layer", "Syscall"}})["write_bytes"], 1000);
  EXPECT_EQ(find_row(t, {{"file", "/dev/sda"}, {"layer", "Block"}})["write_bytes"], 4096);
}

TEST_F(Basic, Files) {
  analysis::FilesOptions o;
  o.common.trace = anchor_.string();
  json t = as_json(analysis::run_files(o))["files"];
  ASSERT_EQ(t.size(), 5u);
  json dev = find_row(t, {{"file", "/dev/sda"}, {"layer", "block"}});
  EXPECT_EQ(dev["writes"], 1);
  EXPECT_EQ(dev["write_bytes"], 4096);
  EXPECT_DOUBLE_EQ(dev["time_s"].get<double>(), 1000 * kNs);
  EXPECT_TRUE(dev["sequential_percent"].is_null());
  EXPECT_EQ(t[0]["file"], "/data/a");  // most bytes first
  json afs = find_row(t, {{"file", "/data/a"}, {"layer", "fs"}});
  EXPECT_EQ(afs["reads"], 1);
  EXPECT_EQ(afs["read_bytes"], 8192);
  json a = find_row(t, {{"file", "/data/a"}, {"layer", "syscall"}});
  EXPECT_EQ(a["reads"], 1);
  EXPECT_EQ(a["writes"], 3);
  EXPECT_EQ(a["other"], 2);
  EXPECT_EQ(a["read_bytes"], 8192);
  EXPECT_EQ(a["write_bytes"], 8292);
  EXPECT_DOUBLE_EQ(a["time_s"].get<double>(), 1650 * kNs);
  // Writes at 0, 4096, 8192 follow each other; the pread at offset 0 does not.
  EXPECT_DOUBLE_EQ(a["sequential_percent"].get<double>(), 75.0);
  EXPECT_DOUBLE_EQ(a["random_percent"].get<double>(), 25.0);
  json sizes = json::array({{{"min_bytes", 64}, {"max_bytes", 127}, {"count", 1}},
                            {{"min_bytes", 4096}, {"max_bytes", 8191}, {"count", 2}},
                            {{"min_bytes", 8192}, {"max_bytes", 16383}, {"count", 1}}});
  EXPECT_EQ(a["access_sizes"], sizes);
  json av = find_row(t, {{"file", "/data/a"}, {"layer", "vfs"}});
  EXPECT_EQ(av["writes"], 1);
  EXPECT_TRUE(av["sequential_percent"].is_null());
  json b = find_row(t, {{"file", "/data/b"}, {"layer", "syscall"}});
  EXPECT_EQ(b["write_bytes"], 1000);
  EXPECT_DOUBLE_EQ(b["sequential_percent"].get<double>(), 100.0);
  o.files = {"/data/b"};
  EXPECT_EQ(as_json(analysis::run_files(o))["files"].size(), 1u);
}

TEST_F(Basic, Latency) {
  analysis::LatencyOptions o;
  o.common.trace = anchor_.string();
  o.svg = (dir_ / "lat.svg").string();
  json t = as_json(analysis::run_latency(o))["latency"];
  json w = find_row(t, {{"layer", "syscall"}, {"operation", "write"}});
  EXPECT_EQ(w["count"], 4);
  EXPECT_DOUBLE_EQ(w["min_s"].get<double>(), 100 * kNs);
  EXPECT_DOUBLE_EQ(w["max_s"].get<double>(), 600 * kNs);
  // 100 | 200 | 400 | 600 fall in buckets 64, 128, 256, 512: the median is the top of 128's.
  EXPECT_DOUBLE_EQ(w["p50_s"].get<double>(), 256 * kNs);
  json buckets = json::array({{{"min_ns", 64}, {"max_ns", 128}, {"count", 1}},
                              {{"min_ns", 128}, {"max_ns", 256}, {"count", 1}},
                              {{"min_ns", 256}, {"max_ns", 512}, {"count", 1}},
                              {{"min_ns", 512}, {"max_ns", 1024}, {"count", 1}}});
  EXPECT_EQ(w["buckets"], buckets);
  EXPECT_EQ(t.size(), 5u);  // syscall read/write/other, vfs write, block write; no fs point
  std::ifstream svg(o.svg);
  std::string text((std::istreambuf_iterator<char>(svg)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("<svg"), std::string::npos);
  EXPECT_NE(text.find("Syscall write (4 calls)"), std::string::npos);
  EXPECT_NE(text.find("</svg>"), std::string::npos);
}

TEST(Empty, EveryCommandAnswersEmpty) {
  TempDir dir;
  auto anchor = write_empty_archive(dir / "trace");
  for (const char* cmd : {"profile", "layers", "files", "latency"}) {
    RunResult r = run({cli_path(), cmd, anchor.string(), "--json"});
    EXPECT_EQ(r.exit_code, 0) << cmd << ": " << r.err;
    EXPECT_NE(r.err.find("no events"), std::string::npos) << cmd << ": " << r.err;
    json j = json::parse(r.out);
    EXPECT_EQ(j["meta"]["events"], 0);
  }
  RunResult r = run({cli_path(), "layers", anchor.string()});
  EXPECT_NE(r.out.find("Page cache"), std::string::npos);
}

TEST_F(Basic, CliFormats) {
  RunResult r = run({cli_path(), "layers", anchor_.string(), "--csv"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')), "# layers");
  EXPECT_NE(
      r.out.find("layer,reads,writes,other,read_bytes,write_bytes,total_s,mean_s,p50_s,p99_s"),
      std::string::npos);
  EXPECT_NE(r.out.find("Syscall,1,4,2,8192,9292,"), std::string::npos);
  r = run({cli_path(), "profile", anchor_.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Thread app [101]:"), std::string::npos);
  EXPECT_NE(r.out.find("All threads:"), std::string::npos);
  EXPECT_NE(r.err.find("lost"), std::string::npos);  // 5 syscall events lost: a warning
  r = run({cli_path(), "files", anchor_.string(), "--json", "--csv"});
  EXPECT_NE(r.exit_code, 0);
  r = run({cli_path(), "latency", anchor_.string(), "--thread", "101", "--layer", "syscall"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Syscall write (3 calls)"), std::string::npos);
  // Filters repeat, and do not swallow the TRACE argument.
  r = run({cli_path(), "profile", "--thread", "101", "--thread", "102", anchor_.string(), "--json",
           "--layer", "syscall", "--layer", "vfs"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(find_row(j["profile"], {{"thread", "All threads"}, {"function", "write"}})["count"], 4);
  EXPECT_FALSE(find_row(j["profile"], {{"function", "vfs_write"}}).is_null());
}

}  // namespace
}  // namespace ezio::test

namespace ezio::test {
namespace {

using analysis::Log2Histogram;

TEST(Histogram, QuantilesAndBuckets) {
  Log2Histogram h;
  EXPECT_EQ(h.quantile(0.5), 0.0);
  h.add(1000);
  EXPECT_EQ(h.quantile(0.5), 1000.0);  // one value: exact
  EXPECT_EQ(h.quantile(0.99), 1000.0);
  for (int i = 0; i < 99; ++i) h.add(10);
  EXPECT_EQ(Log2Histogram::bucket_of(10), 3);
  // 99 values of 10 in bucket [8, 16): interpolated from the observed minimum, within 2x.
  EXPECT_GE(h.quantile(0.5), 10.0);
  EXPECT_LT(h.quantile(0.5), 16.0);
  EXPECT_EQ(h.max(), 1000u);
  EXPECT_EQ(Log2Histogram::bucket_of(0), 0);
  EXPECT_EQ(Log2Histogram::bucket_of(~uint64_t{0}), 63);
}

}  // namespace
}  // namespace ezio::test
