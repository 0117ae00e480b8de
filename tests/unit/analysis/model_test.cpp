// SPDX-License-Identifier: GPL-2.0-only
// The trace model (analysis/model/) on the synthetic archive of synthetic.cpp and on events fed by
// hand: definitions, event streaming, call pairing, layer names, what a recording observed, whose
// files are whose; and the analyzers' clean failure on broken archives.
#include <gtest/gtest.h>

#include <fstream>

#include "analysis/model/calls.h"
#include "analysis/model/file_origin.h"
#include "analysis/model/observed.h"
#include "analysis/model/trace_reader.h"
#include "tests/support/run_cli.h"
#include "tests/support/synthetic.h"
#include "tests/unit/analysis/test_util.h"

namespace ezio::test {
namespace {

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

// Bad input: a message naming the problem, a non-zero exit, never a crash or a hang.
class BadInput : public Basic {
 protected:
  void expect_clean_failure(const std::string& path, const std::string& words) {
    for (const char* cmd : {"profile", "layers", "files", "latency", "collective"}) {
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
