// Exact answers of the analyzers on the synthetic archive of synthetic.cpp. Durations are in ns
// (resolution 1e9), so seconds below are ns * 1e-9.
#include <gtest/gtest.h>

#include <fstream>

#include "analysis/calls.h"
#include "analysis/files.h"
#include "analysis/histogram.h"
#include "analysis/latency.h"
#include "analysis/layers.h"
#include "analysis/observed.h"
#include "analysis/profile.h"
#include "analysis/trace_reader.h"
#include "common/error.h"
#include "tests/support/run_cli.h"
#include "tests/support/synthetic.h"
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

struct CountingSink : analysis::EventSink {
  std::map<OTF2_LocationRef, int> events;
  int enters = 0, leaves = 0, begins = 0, completes = 0, creates = 0, destroys = 0;
  uint64_t bytes_attr = 0;
  void enter(OTF2_LocationRef l, uint64_t, otf2::Ref, const analysis::CallAttributes& a) override {
    ++events[l], ++enters;
    if (a.has_bytes) bytes_attr += a.bytes;
  }
  void leave(OTF2_LocationRef l, uint64_t, otf2::Ref, const analysis::CallAttributes&) override {
    ++events[l], ++leaves;
  }
  void io_begin(OTF2_LocationRef l, uint64_t, otf2::Ref, OTF2_IoOperationMode, uint64_t, uint64_t,
                const analysis::CallAttributes&) override {
    ++events[l], ++begins;
  }
  void io_complete(OTF2_LocationRef l, uint64_t, otf2::Ref, uint64_t, uint64_t) override {
    ++events[l], ++completes;
  }
  void io_create_handle(OTF2_LocationRef l, uint64_t, otf2::Ref) override {
    ++events[l], ++creates;
  }
  void io_destroy_handle(OTF2_LocationRef l, uint64_t, otf2::Ref) override {
    ++events[l], ++destroys;
  }
};

TEST_F(Basic, ReaderDefinitions) {
  analysis::TraceReader r(dir_ / "trace");  // the directory is accepted as well as the anchor
  const auto& d = r.defs();
  EXPECT_EQ(d.locations.size(), 4u);
  EXPECT_EQ(d.metric_classes.size(), 1u);
  EXPECT_EQ(d.metric_members.size(), 1u);
  EXPECT_EQ(d.regions.size(), 6u);
  EXPECT_EQ(d.location(101)->name, "app [101]");
  EXPECT_EQ(d.process_of(102), "app [100]");
  EXPECT_EQ(d.location_tids.at(102), 102u);
  EXPECT_EQ(d.node_uint_properties.at("EZIOTRACE::LOST::syscall"), 5u);
  EXPECT_EQ(d.node_string_properties.at("EZIOTRACE::STATUS"), "complete");
  EXPECT_EQ(d.handle_path(0), "/data/a");
  EXPECT_EQ(d.handle_path(1), "/data/b");
  EXPECT_EQ(d.handle_path(2), "/dev/sda");
  EXPECT_EQ(d.handle_path(77), "<handle 77>");  // dangling references do not throw
  EXPECT_EQ(d.global_offset, 1000u);
}

TEST_F(Basic, ReaderStreamsEveryEvent) {
  analysis::TraceReader r(anchor_);
  CountingSink s;
  uint64_t reported = 0;
  r.read_events(s, [&](const otf2::ReadProgress& p) { reported = p.events; });
  // openat 3 events, the write with a nested vfs_write 6, two more writes 4 each, the pread with
  // its fs point 6, close 3.
  EXPECT_EQ(s.events[101], 26);
  EXPECT_EQ(s.events[102], 4);
  EXPECT_EQ(s.events[(uint64_t{1} << 32) | 1], 2);  // + IoOperationIssued, not delivered
  EXPECT_EQ(reported, 36u);                         // + 3 page-cache Metric events
  EXPECT_EQ(s.enters, 9);
  EXPECT_EQ(s.leaves, 9);
  EXPECT_EQ(s.begins, 6);
  EXPECT_EQ(s.completes, 6);
  EXPECT_EQ(s.creates, 1);
  EXPECT_EQ(s.destroys, 1);
  EXPECT_EQ(s.bytes_attr, 4096u + 4096 + 100 + 8192 + 8192 + 1000);  // syscall.bytes, fs.bytes
}

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
  EXPECT_NEAR(all["percent_runtime"].get<double>(), 100.0 * 1300 / (5050 + 600 + 1000), 1e-9);
  EXPECT_EQ(j["meta"]["lost_events"]["syscall"], 5);
  // The block request, timed from creation to completion.
  json blk = find_row(t, {{"thread", "block sda"}, {"function", "write"}});
  EXPECT_EQ(blk["layer"], "block");
  EXPECT_EQ(blk["count"], 1);
  EXPECT_EQ(blk["bytes"], 4096);
  EXPECT_DOUBLE_EQ(blk["inclusive_s"].get<double>(), 1000 * kNs);
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
  ASSERT_EQ(t.size(), 6u);
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

// Bad input: a message naming the problem, a non-zero exit, never a crash or a hang.
class BadInput : public Basic {
 protected:
  void expect_clean_failure(const std::string& path, const std::string& words) {
    for (const char* cmd : {"profile", "layers", "files", "latency"}) {
      RunResult r = run({cli_path(), cmd, path}, 30);
      EXPECT_FALSE(r.timed_out) << cmd << " " << path;
      EXPECT_EQ(r.signal, 0) << cmd << " " << path;
      EXPECT_NE(r.exit_code, 0) << cmd << " " << path;
      EXPECT_NE(r.err.find("eziotrace: "), std::string::npos) << r.err;
      EXPECT_NE(r.err.find(words), std::string::npos) << cmd << ": " << r.err;
    }
  }
  std::filesystem::path trace_dir() const { return anchor_.parent_path(); }
};

TEST_F(BadInput, MissingPath) {
  expect_clean_failure((dir_ / "nope").string(), "no such file or directory");
}

TEST_F(BadInput, DirectoryWithoutArchive) {
  std::filesystem::create_directories(dir_ / "empty");
  expect_clean_failure((dir_ / "empty").string(), "not an OTF2 archive");
}

TEST_F(BadInput, EmptyAnchor) {
  std::ofstream(dir_ / "x.otf2").close();
  expect_clean_failure((dir_ / "x.otf2").string(), "empty file");
}

TEST_F(BadInput, GarbageAnchor) {
  std::ofstream(dir_ / "x.otf2") << "this is not an anchor file\n";
  expect_clean_failure((dir_ / "x.otf2").string(), "not a readable OTF2 archive");
}

TEST_F(BadInput, TruncatedEvents) {
  auto evt = trace_dir() / "eziotrace" / "101.evt";
  std::filesystem::resize_file(evt, std::filesystem::file_size(evt) / 2);
  expect_clean_failure(anchor_.string(), "events of location 101");
}

TEST_F(BadInput, MissingEvents) {
  std::filesystem::remove(trace_dir() / "eziotrace" / "102.evt");
  expect_clean_failure(anchor_.string(), "location 102");
}

TEST_F(BadInput, CorruptedDefinitions) {
  auto def = trace_dir() / "eziotrace.def";
  auto size = std::filesystem::file_size(def);
  {
    std::fstream f(def, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(size / 3));
    std::string junk(size / 3, '\xff');
    f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  expect_clean_failure(anchor_.string(), "definitions");
}

TEST_F(BadInput, TruncatedDefinitions) {
  auto def = trace_dir() / "eziotrace.def";
  std::filesystem::resize_file(def, std::filesystem::file_size(def) - 7);
  expect_clean_failure(anchor_.string(), "definitions");
}

}  // namespace
}  // namespace ezio::test

namespace ezio::test {
namespace {

using analysis::Call;
using analysis::Log2Histogram;

// Pairs events fed by hand, as a broken EZTrace archive would deliver them.
struct Recorder : analysis::CallSink {
  using CallSink::CallSink;
  std::vector<Call> calls;
  std::vector<std::pair<uint64_t, uint64_t>> spans;
  void on_call(const Call& c) override { calls.push_back(c); }
  void on_location_done(OTF2_LocationRef, uint64_t first, uint64_t last) override {
    spans.emplace_back(first, last);
  }
};

analysis::Definitions defect_defs() {
  analysis::Definitions d;
  d.regions[3] = {"outer", "outer", OTF2_REGION_ROLE_FUNCTION};
  d.regions[900] = {"write", "syscall:write", OTF2_REGION_ROLE_FILE_IO};
  d.io_handles[5] = {"/x/y [pid 1 fd 3]", 42};  // IoFile 42 is not defined
  return d;
}

TEST(CallPairing, ToleratesDefects) {
  analysis::Definitions d = defect_defs();
  Recorder r(d);
  analysis::CallAttributes none;
  r.begin_location(7);
  r.leave(7, 5, 3, none);  // LEAVE without ENTER: ignored
  r.enter(7, 10, 3, none);
  r.enter(7, 20, 900, none);
  r.io_begin(7, 20, 5, OTF2_IO_OPERATION_MODE_WRITE, 64, 1, none);
  r.io_complete(7, 30, 5, 64, 1);
  r.leave(7, 40, 3, none);   // leaves "outer" while "write" is open: write closes at 40
  r.enter(7, 50, 77, none);  // undefined region
  r.end_location(7);         // never left: closed at the last event (50)
  ASSERT_EQ(r.calls.size(), 3u);
  EXPECT_EQ(r.calls[0].info->name, "write");
  EXPECT_EQ(r.calls[0].duration(), 20u);
  EXPECT_EQ(r.calls[0].op, analysis::Op::kWrite);
  EXPECT_EQ(r.calls[0].bytes, 64u);
  EXPECT_EQ(d.handle_path(r.calls[0].handle), "/x/y");
  EXPECT_EQ(r.calls[1].info->name, "outer");
  EXPECT_EQ(r.calls[1].duration(), 30u);
  EXPECT_EQ(r.calls[1].exclusive(), 10u);
  EXPECT_EQ(r.calls[2].info->name, "<unknown region>");
  EXPECT_EQ(r.calls[2].duration(), 0u);
  EXPECT_EQ(r.anomalies().unmatched, 1u);
  EXPECT_EQ(r.anomalies().misnested, 1u);
  EXPECT_EQ(r.anomalies().unclosed, 1u);
  EXPECT_EQ(r.anomalies().unknown_regions, 1u);
  EXPECT_EQ(r.spans.front(), std::make_pair(uint64_t{5}, uint64_t{50}));
}

TEST(CallPairing, OverlappingBlockRequests) {
  analysis::Definitions d = defect_defs();
  d.locations[9] = {"block vdb", 0};
  Recorder r(d);
  analysis::CallAttributes none;
  r.begin_location(9);
  r.io_begin(9, 0, 5, OTF2_IO_OPERATION_MODE_WRITE, 4096, 1, none);
  r.io_begin(9, 5, 5, OTF2_IO_OPERATION_MODE_READ, 512, 2, none);
  r.io_complete(9, 10, 5, 512, 2);
  r.io_complete(9, 20, 5, 4096, 1);
  r.io_begin(9, 30, 5, OTF2_IO_OPERATION_MODE_FLUSH, 0, 3, none);  // never completes
  r.end_location(9);
  ASSERT_EQ(r.calls.size(), 2u);
  EXPECT_EQ(r.calls[0].info->canonical, "block:read");
  EXPECT_EQ(r.calls[0].info->layer, analysis::Layer::kBlock);
  EXPECT_EQ(r.calls[0].duration(), 5u);
  EXPECT_EQ(r.calls[0].bytes, 512u);
  EXPECT_EQ(r.calls[1].op, analysis::Op::kWrite);
  EXPECT_EQ(r.calls[1].duration(), 20u);
  EXPECT_EQ(r.region_info(r.calls[1].region).canonical, "block:write");
  EXPECT_EQ(r.anomalies().unfinished_requests, 1u);
}

TEST(CallPairing, BackwardTimeClampsDuration) {
  analysis::Definitions d = defect_defs();
  Recorder r(d);
  analysis::CallAttributes none;
  r.begin_location(1);
  r.enter(1, 100, 3, none);
  r.leave(1, 90, 3, none);
  r.end_location(1);
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].duration(), 0u);
  EXPECT_EQ(r.anomalies().backwards, 1u);
}

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

TEST(Layers, Classification) {
  using analysis::Layer;
  using analysis::Op;
  EXPECT_EQ(analysis::layer_of("syscall:write"), Layer::kSyscall);
  EXPECT_EQ(analysis::layer_of("pagecache:add_to_page_cache"), Layer::kPageCache);
  EXPECT_EQ(analysis::layer_of("MPI:send"), Layer::kUser);
  EXPECT_EQ(analysis::layer_of("fwrite"), Layer::kUser);
  EXPECT_EQ(analysis::short_name("vfs:vfs_read"), "vfs_read");
  EXPECT_EQ(analysis::op_from_name("pwritev2"), Op::kWrite);
  EXPECT_EQ(analysis::op_from_name("readlink"), Op::kOther);
  EXPECT_EQ(analysis::op_from_name("fread"), Op::kRead);
  EXPECT_EQ(analysis::op_from_name("openat"), Op::kOther);
  EXPECT_EQ(analysis::parse_layer("Page cache"), Layer::kPageCache);
  EXPECT_FALSE(analysis::parse_layer("disk"));
}

// What the recorder's hook list says a layer could see (EZIOTRACE::PROBE::<layer>).
TEST(Observed, FromTheProbeProperties) {
  using analysis::Layer;
  using analysis::Observed;
  using analysis::Op;
  std::map<std::string, std::string> none;
  EXPECT_EQ(analysis::observed(none, Layer::kFs, Op::kRead), Observed::kUnknown);
  std::map<std::string, std::string> tp = {
      {"EZIOTRACE::PROBE::syscall", "tp_btf/sys_enter+sys_exit (exact)"},
      {"EZIOTRACE::PROBE::fs",
       "ext4: tp_btf/ext4_da_write_end,ext4_write_end,ext4_journalled_write_end,"
       "ext4_sync_file_enter,"
       "ext4_sync_file_exit; xfs: tp_btf/xfs_file_buffered_read,xfs_file_buffered_write,"
       "xfs_file_fsync; btrfs: none; iomap: tp_btf/iomap_dio_rw_begin (derived)"},
      {"EZIOTRACE::PROBE::pagecache",
       "tp_btf/mm_filemap_add_to_page_cache,mm_filemap_get_pages,mm_filemap_fault,"
       "mm_filemap_delete_from_page_cache,writeback_dirty_folio (exact)"},
      {"EZIOTRACE::PROBE::block", "none (none)"}};
  EXPECT_EQ(analysis::observed(tp, Layer::kSyscall, Op::kRead), Observed::kAll);
  EXPECT_EQ(analysis::observed(tp, Layer::kVfs, Op::kRead), Observed::kNone);  // not recorded
  EXPECT_EQ(analysis::observed(tp, Layer::kFs, Op::kRead), Observed::kPartial);
  EXPECT_EQ(analysis::observed(tp, Layer::kFs, Op::kOther), Observed::kPartial);
  EXPECT_EQ(analysis::observed(tp, Layer::kPageCache, Op::kWrite), Observed::kAll);
  EXPECT_EQ(analysis::observed(tp, Layer::kBlock, Op::kWrite), Observed::kNone);
  EXPECT_EQ(analysis::observed(tp, Layer::kUser, Op::kWrite), Observed::kNone);  // no EZTrace
  tp["EZIOTRACE::ALIGNMENT"] = "exact";  // merged with EZTrace's trace
  EXPECT_EQ(analysis::observed(tp, Layer::kUser, Op::kWrite), Observed::kAll);
  tp["EZIOTRACE::PROBE::fs"] =
      "ext4: fentry/fexit ext4_file_read_iter,ext4_file_write_iter,ext4_sync_file; xfs: "
      "fentry/fexit xfs_file_read_iter,xfs_file_write_iter,xfs_file_fsync; btrfs: kprobe/kretprobe "
      "btrfs_file_read_iter,btrfs_file_write_iter,btrfs_sync_file (exact)";
  EXPECT_EQ(analysis::observed(tp, Layer::kFs, Op::kRead), Observed::kAll);
  tp["EZIOTRACE::PROBE::fs"] =
      "ext4: tp_btf/ext4_sync_file_enter; xfs: none; btrfs: none (derived)";
  EXPECT_EQ(analysis::observed(tp, Layer::kFs, Op::kRead), Observed::kNone);
}

}  // namespace
}  // namespace ezio::test
