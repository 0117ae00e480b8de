// SPDX-License-Identifier: GPL-2.0-only
// The timeline exports on real recordings: the Pajé file holds exactly the calls per
// layer row, the block requests and the call -> request links that python3-otf2 finds in the
// archive; links start inside their call and end at their request; lanes never overlap. ViTE
// parses the Pajé file and the archive without error and draws them (screenshots under Xvfb);
// the Perfetto JSON pairs its flows and nests its slices. Needs root (BPF, loop devices).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "loop_fs.h"
#include "paje_file.h"
#include "run.h"
#include "vite_rows.h"
#include "vite_window.h"

namespace fs = std::filesystem;
using ezio::test::pixels_near;
using ezio::test::run;
using ezio::test::screenshot;
using ezio::test::vite_svg;
using nlohmann::json;

namespace {

std::string must(const std::vector<std::string>& argv) {
  auto r = run(argv);
  if (r.status != 0) throw std::runtime_error(argv[0] + " failed: " + r.err + r.out);
  return r.out;
}

// What the archive holds, counted by python3-otf2 (tests/support/otf2_dump.py).
struct Oracle {
  std::map<std::string, long> calls;  // per row container, as the export names them
  long requests = 0, links = 0;
  std::map<uint64_t, std::tuple<std::string, uint64_t, uint64_t>>
      call_of;                                    // call.id -> loc, t0, t1
  std::map<std::string, uint64_t> request_begin;  // link key -> time
  uint64_t offset = 0;
};

std::string layer_of(const std::string& canonical) {
  for (std::string l : {"syscall", "vfs", "fs", "pagecache", "block"}) {
    if (canonical.starts_with(l + ":")) return l;
  }
  return "user";
}

Oracle oracle(const fs::path& anchor) {
  json d = ezio::test::dump_archive(anchor);
  Oracle o;
  o.offset = d["clock"]["offset"];
  for (auto& [ref, loc] : d["locations"].items()) {
    for (auto& c : loc["calls"]) {
      ++o.calls["t" + ref + "_syscall"];
      if (c.contains("call.id")) o.call_of[c["call.id"]] = {ref, c["t0"], c["t1"]};
    }
    for (auto& [canonical, n] : loc["other_regions"].items()) {
      std::string l = layer_of(canonical);
      if (l != "pagecache" && l != "block") o.calls["t" + ref + "_" + l] += n.get<long>();
    }
  }
  for (auto& [ref, loc] : d["locations"].items()) {
    if (!loc["name"].get<std::string>().starts_with("block ") || !loc.contains("loose_io"))
      continue;
    for (auto& io : loc["loose_io"]) {
      if (io["kind"] != "IoOperationBegin") continue;
      ++o.requests;
      std::string key = "r" + ref + "_" + std::to_string(io["id"].get<uint64_t>());
      o.request_begin[key] = io["t"];
      if (io.contains("call.id") && o.call_of.count(io["call.id"])) ++o.links;
    }
  }
  return o;
}

struct Recording {
  fs::path dir, archive;
};

Recording record(const std::string& name, const std::vector<std::string>& command,
                 bool with_eztrace = false) {
  Recording r{ezio::test::scratch_dir("view-" + name), {}};
  std::vector<std::string> args =
      with_eztrace ? std::vector<std::string>{"-o"} : std::vector<std::string>{"record", "-o"};
  args.push_back((r.dir / "trace").string());
  args.push_back("--");
  args.insert(args.end(), command.begin(), command.end());
  auto rec = ezio::test::eziotrace(args);
  EXPECT_EQ(rec.status, 0) << rec.err;
  r.archive = r.dir / "trace" / "eziotrace.otf2";
  return r;
}

// The Pajé export equals the archive, call for call, request for request, link for link.
ezio::test::PajeFile check_paje(const Recording& rec, long min_links) {
  fs::path out = rec.dir / "timeline.trace";
  auto ex = ezio::test::eziotrace(
      {"export", "--format", "paje", rec.archive.string(), "-o", out.string()});
  EXPECT_EQ(ex.status, 0) << ex.err;
  auto p = ezio::test::read_paje(out);
  Oracle o = oracle(rec.archive);
  EXPECT_TRUE(p.errors.empty()) << p.errors.front();
  EXPECT_EQ(p.calls, o.calls);
  EXPECT_EQ(p.requests, o.requests);
  EXPECT_EQ(static_cast<long>(p.link_starts.size()), o.links);
  EXPECT_EQ(static_cast<long>(p.link_ends.size()), o.links);
  EXPECT_GE(o.links, min_links);
  for (auto& [key, start] : p.link_starts) {
    EXPECT_TRUE(p.link_ends.count(key)) << key << " starts but does not end";
    if (!p.link_ends.count(key) || !o.request_begin.count(key)) continue;
    uint64_t begin = o.request_begin.at(key);
    EXPECT_EQ(p.link_ends[key].ns + o.offset, begin) << key << " does not end at its request";
    bool inside = false;
    for (auto& [id, call] : o.call_of) {
      auto& [loc, t0, t1] = call;
      if (start.container == "t" + loc + "_syscall" && start.ns + o.offset >= t0 &&
          start.ns + o.offset <= t1) {
        inside = true;
      }
    }
    EXPECT_TRUE(inside) << key << " starts outside every syscall of " << start.container;
  }
  return p;
}

// The Perfetto export: parses, slices nest per track, flows pair, counts equal the Pajé file's.
void check_perfetto(const Recording& rec, const ezio::test::PajeFile& paje) {
  fs::path out = rec.dir / "timeline.json";
  auto ex = ezio::test::eziotrace(
      {"export", "--format", "perfetto", rec.archive.string(), "-o", out.string()});
  ASSERT_EQ(ex.status, 0) << ex.err;
  std::ifstream in(out);
  json d = json::parse(in);
  std::map<std::pair<long, long>, std::vector<std::pair<double, double>>> tracks;
  std::map<long, int> flows;
  long calls = 0, requests = 0;
  for (auto& e : d["traceEvents"]) {
    std::string ph = e["ph"];
    if (ph == "X") {
      double ts = e["ts"], dur = e["dur"];
      tracks[{e["pid"], e["tid"]}].push_back({ts, ts + dur});
      if (e["cat"] != "block") ++calls;
      if (e["cat"] == "block" && e["name"] != "in service") ++requests;
    }
    if (ph == "s") ++flows[e["id"]];
    if (ph == "f") flows[e["id"]] += 100;
    EXPECT_NE(ph, "B") << "only complete (X) slices are written";
  }
  long paje_calls = 0;
  for (auto& [row, n] : paje.calls) paje_calls += n;
  EXPECT_EQ(calls, paje_calls);
  EXPECT_EQ(requests, paje.requests);
  EXPECT_EQ(static_cast<long>(flows.size()), static_cast<long>(paje.link_starts.size()));
  for (auto& [id, n] : flows) EXPECT_EQ(n, 101) << "flow " << id << " does not pair";
  for (auto& [track, slices] : tracks) {
    std::sort(slices.begin(), slices.end(), [](auto& a, auto& b) {
      return a.first < b.first || (a.first == b.first && a.second > b.second);
    });
    std::vector<double> open;
    for (auto& [b, e] : slices) {
      while (!open.empty() && open.back() <= b) open.pop_back();
      if (!open.empty()) {
        ASSERT_LE(e, open.back() + 1e-9) << "slices cross on track " << track.second;
      }
      open.push_back(e);
    }
  }
}

class View : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(geteuid(), 0u) << "these tests record with BPF and loop devices: run them as root";
    fs_ = std::make_unique<ezio::test::LoopFs>("ext4");
  }
  std::unique_ptr<ezio::test::LoopFs> fs_;
};

TEST_F(View, BufferedWritesAndFsyncLinkEveryRequestToItsCall) {
  auto rec = record("buffered", {"dd", "if=/dev/zero", "of=" + (fs_->mount_point() / "f").string(),
                                 "bs=64k", "count=64", "conv=fsync"});
  auto p = check_paje(rec, 2);
  check_perfetto(rec, p);
}

TEST_F(View, DirectWritesLinkFromTheirSyscall) {
  auto rec = record("direct", {"dd", "if=/dev/zero", "of=" + (fs_->mount_point() / "d").string(),
                               "bs=64k", "count=32", "oflag=direct"});
  auto p = check_paje(rec, 32);
  check_perfetto(rec, p);
}

TEST_F(View, ColdReadsLinkFromTheReadThatMissed) {
  must(
      {"dd", "if=/dev/urandom", "of=" + (fs_->mount_point() / "c").string(), "bs=64k", "count=32"});
  fs_->remount();
  auto rec =
      record("cold", {"dd", "if=" + (fs_->mount_point() / "c").string(), "of=/dev/null", "bs=64k"});
  auto p = check_paje(rec, 1);
  check_perfetto(rec, p);
}

TEST_F(View, MergedEztraceRunHasAUserRowAboveTheSyscalls) {
  auto rec =
      record("merged", {ezio::test::program("write3"), (fs_->mount_point() / "w").string()}, true);
  auto p = check_paje(rec, 0);
  long user = 0;
  for (auto& [row, n] : p.calls) {
    if (row.ends_with("_user")) user += n;
  }
  EXPECT_GE(user, 5) << "open, 3 writes and close of write3 under EZTrace";
  check_perfetto(rec, p);
}

TEST_F(View, VitePaintsTheLayersAndTheLinks) {
  auto rec = record("vite", {"dd", "if=/dev/zero", "of=" + (fs_->mount_point() / "v").string(),
                             "bs=64k", "count=64", "conv=fsync"});
  fs::path trace = rec.dir / "timeline.trace";
  auto p = check_paje(rec, 2);
  std::string svg = vite_svg(trace, rec.dir / "paje.svg");
  size_t lines = 0;
  for (size_t at = svg.find("<line"); at != std::string::npos; at = svg.find("<line", at + 1))
    ++lines;
  EXPECT_GE(lines, p.link_starts.size()) << "ViTE's SVG export draws each link as a line";
  // The regions this workload runs, in their fixed colours (docs/timeline.md, colour legend).
  auto shot = screenshot(trace, rec.dir / "paje.png");
  // Block writes, queued or in service (either part may be narrower than a pixel at this zoom).
  EXPECT_GT(pixels_near(shot, p.colours.at("s_write")) + pixels_near(shot, p.colours.at("q_write")),
            30)
      << "block writes not painted";
  // syscall:write and vfs:vfs_write: the alias of a region is r<id>; find them by colour.
  std::vector<std::vector<uint8_t>> layer_writes = {{13, 60, 150}, {191, 54, 12}};
  for (auto& c : layer_writes) {
    EXPECT_GT(pixels_near(shot, c), 50) << "write colour of a layer not painted";
  }
  // The archive itself: ViTE's OTF2 reader accepts it and draws its regions.
  vite_svg(rec.archive, rec.dir / "otf2.svg");
  auto otf2_shot = screenshot(rec.archive, rec.dir / "otf2.png");
  EXPECT_GT(pixels_near(otf2_shot, {0, 0, 153}), 100) << "no container drawn";
}

// The page cache must not drown the threads in ViTE's view of the plain archive.
// ViTE draws one row per member of each METRIC location, as high as a thread's row: the archive
// has one page-cache location per process with one member (docs/trace-model.md), where it had
// one per thread with eight. Measured as a person sees it: the heights of ViTE's container boxes
// in a screenshot of its window, named by the order of its SVG export.
TEST_F(View, VitesOtf2ViewGivesThePageCacheOneRowPerProcess) {
  // Page-cache work on three threads in two processes: io_sequence's writer and reader threads,
  // and its child write3.
  auto rec =
      record("rows", {ezio::test::program("io_sequence"), (fs_->mount_point() / "d").string(),
                      ezio::test::program("write3"), (fs_->mount_point() / "w").string()});
  json dump = ezio::test::dump_archive(rec.archive);
  std::set<std::string> cache_locations;
  size_t sampled_threads = 0;
  for (auto& [ref, loc] : dump["locations"].items()) {
    if (loc["type"] != "METRIC") continue;
    cache_locations.insert(loc["name"].get<std::string>() + "_" + ref);
    EXPECT_EQ(loc["metrics"]["members"].size(), 1u) << loc["name"];
    sampled_threads += loc["metrics"]["threads"].size();
  }
  ASSERT_EQ(cache_locations.size(), 2u) << "one page-cache location per process";
  ASSERT_GE(sampled_threads, 3u) << "page-cache samples of the writer, the reader and the child";

  std::string svg = vite_svg(rec.archive, rec.dir / "rows.svg");
  auto boxes = ezio::test::leaf_boxes(svg);
  screenshot(rec.archive, rec.dir / "rows.png");
  auto heights = ezio::test::leaf_box_heights(rec.dir / "rows.png");
  ASSERT_EQ(heights.size(), boxes.size()) << "the screenshot's container column does not match "
                                             "ViTE's SVG export: "
                                          << (rec.dir / "rows.png");
  int row = 0, cache = 0, others = 0;
  for (size_t i = 0; i < boxes.size(); ++i) {
    // A thread's box holds one row; the block device's is a little lower.
    if (!cache_locations.count(boxes[i].label)) row = std::max(row, heights[i]);
  }
  for (size_t i = 0; i < boxes.size(); ++i) {
    bool is_cache = cache_locations.count(boxes[i].label);
    (is_cache ? cache : others) += heights[i];
    if (is_cache) {
      EXPECT_LE(heights[i], row) << boxes[i].label << " takes more than a row";
    }
  }
  // The per-thread layout gave each sampled thread eight rows: 24 here, against 2.
  RecordProperty("page_cache_rows", static_cast<int>(cache_locations.size()));
  RecordProperty("per_thread_layout_rows", static_cast<int>(8 * sampled_threads));
  EXPECT_LT(cache, others) << "the page cache takes more of ViTE's window than the threads and "
                              "the block device: "
                           << (rec.dir / "rows.png");
}

// --window, --thread and --layers cut the export: nothing outside the window, only the rows and
// threads asked for, and the full export's links that fit.
TEST_F(View, WindowThreadAndLayersCutTheExport) {
  auto rec = record("cut", {"dd", "if=/dev/zero", "of=" + (fs_->mount_point() / "x").string(),
                            "bs=64k", "count=64", "conv=fsync"});
  auto full = check_paje(rec, 2);
  // The window starts halfway through the calls.
  double first = 1e9, last = 0;
  std::ifstream full_in(rec.dir / "timeline.trace");
  for (std::string l; std::getline(full_in, l);) {
    if (!l.starts_with("9 ")) continue;
    double t = std::stod(l.substr(2));
    first = std::min(first, t);
    last = std::max(last, t);
  }
  char t0[32];
  snprintf(t0, sizeof t0, "%.9f", (first + last) / 2);
  fs::path out = rec.dir / "cut.trace";
  auto ex = ezio::test::eziotrace({"export", rec.archive.string(), "-o", out.string(), "--layers",
                                   "syscall,block", "--window", std::string(t0) + ":1000"});
  ASSERT_EQ(ex.status, 0) << ex.err;
  auto cut = ezio::test::read_paje(out);
  EXPECT_TRUE(cut.errors.empty());
  for (auto& [row, n] : cut.calls) EXPECT_TRUE(row.ends_with("_syscall")) << row;
  EXPECT_LE(cut.requests, full.requests);
  EXPECT_LE(cut.link_starts.size(), full.link_starts.size());
  EXPECT_EQ(cut.link_starts.size(), cut.link_ends.size());
  ASSERT_FALSE(cut.calls.empty());
  EXPECT_LT(cut.calls.begin()->second, full.calls.at(cut.calls.begin()->first));
  std::ifstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with("9 ") || line.starts_with("16 ")) {
      std::string time = line.substr(line.find(' ') + 1, 11);
      EXPECT_GE(time, std::string(t0)) << "drawn before the window: " << line;
    }
  }
  // One thread: its TID is in its rows' names; no other thread's rows.
  std::string row = full.calls.begin()->first;  // t<tid>_<layer>
  std::string tid = row.substr(1, row.find('_') - 1);
  fs::path one = rec.dir / "one.trace";
  ex = ezio::test::eziotrace({"export", rec.archive.string(), "-o", one.string(), "--thread", tid});
  ASSERT_EQ(ex.status, 0) << ex.err;
  auto t = ezio::test::read_paje(one);
  for (auto& [r, n] : t.calls) EXPECT_TRUE(r.starts_with("t" + tid + "_")) << r;
  EXPECT_EQ(t.link_starts.size(), full.link_starts.size()) << "dd's requests are all its own";
}

TEST(ViewBadInput, ClearMessagesAndNoOutput) {
  fs::path dir = ezio::test::scratch_dir("view-bad");
  fs::path text = dir / "notes.txt";
  std::ofstream(text) << "not a trace\n";
  fs::path empty = dir / "empty";
  fs::create_directories(empty);
  for (const fs::path& bad : {text, empty}) {
    auto r = ezio::test::eziotrace(
        {"export", "--format", "paje", bad.string(), "-o", (dir / "o.trace").string()});
    EXPECT_GT(r.status, 0);
    EXPECT_LT(r.status, 128);
    EXPECT_NE(r.err.find(bad.string()), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir / "o.trace"));
  }
  // A window after the end of a real (tiny) recording.
  auto rec = record("bad-window", {"true"});
  auto r = ezio::test::eziotrace({"export", "--format", "perfetto", rec.archive.string(), "-o",
                                  (dir / "o.json").string(), "--window", "100:200"});
  EXPECT_GT(r.status, 0);
  EXPECT_LT(r.status, 128);
  EXPECT_NE(r.err.find("--window"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "o.json"));
  // More events than a viewer holds: refused, with a window suggested.
  r = ezio::test::eziotrace(
      {"export", rec.archive.string(), "-o", (dir / "o.trace").string(), "--max-events", "1"});
  EXPECT_GT(r.status, 0);
  EXPECT_LT(r.status, 128);
  EXPECT_NE(r.err.find("--window"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "o.trace"));
  // A user's file at the output path survives, with and without --force.
  fs::path mine = dir / "mine.trace";
  std::ofstream(mine) << "my notes\n";
  for (bool force : {false, true}) {
    std::vector<std::string> args = {"export", rec.archive.string(), "-o", mine.string()};
    if (force) args.push_back("--force");
    auto w = ezio::test::eziotrace(args);
    EXPECT_GT(w.status, 0);
    std::ifstream in(mine);
    std::string content;
    std::getline(in, content);
    EXPECT_EQ(content, "my notes");
  }
  // No display: `view` says so.
  auto v = run({"env", "-u", "DISPLAY", EZIO_BINARY, "view", rec.archive.string()});
  EXPECT_GT(v.status, 0);
  EXPECT_LT(v.status, 128);
  EXPECT_NE(v.err.find("DISPLAY"), std::string::npos) << v.err;
  // A display but no ViTE: `view` says so before converting anything.
  v = run({"env", "PATH=/nonexistent", "DISPLAY=:1", EZIO_BINARY, "view", rec.archive.string()});
  EXPECT_GT(v.status, 0);
  EXPECT_LT(v.status, 128);
  EXPECT_NE(v.err.find("ViTE is not installed"), std::string::npos) << v.err;
}

}  // namespace
