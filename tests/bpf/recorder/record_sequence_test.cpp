// SPDX-License-Identifier: GPL-2.0-only
// Records tests/programs/io_sequence (known calls, a second thread, a forked child that execs) and
// checks every call the archive holds against what the program did.
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>

#include "run.h"

namespace fs = std::filesystem;
using ezio::test::dump_archive;
using ezio::test::eziotrace;
using ezio::test::program;
using nlohmann::json;

namespace {

struct Recording {
  fs::path dir, data, child_file;
  int main_tid = 0, reader_tid = 0, child_pid = 0;
  ezio::test::Run run;
  json archive;
};

const Recording& recording() {
  static Recording r = [] {
    Recording r;
    r.dir = ezio::test::scratch_dir("sequence");
    r.data = r.dir / "data.bin";
    r.child_file = r.dir / "child.txt";
    r.run = eziotrace({"record", "-o", (r.dir / "trace").string(), "--", program("io_sequence"),
                       r.data.string(), program("write3"), r.child_file.string()});
    std::smatch m;
    if (std::regex_search(r.run.out, m, std::regex("main=(\\d+) reader=(\\d+) child=(\\d+)"))) {
      r.main_tid = std::stoi(m[1]);
      r.reader_tid = std::stoi(m[2]);
      r.child_pid = std::stoi(m[3]);
    }
    r.archive = dump_archive(r.dir / "trace" / "eziotrace.otf2");
    return r;
  }();
  return r;
}

const json& calls_of(int tid) {
  return recording().archive["locations"][std::to_string(tid)]["calls"];
}

// The calls of a thread on one file, by syscall name.
std::vector<json> calls_on(int tid, const std::string& name, const fs::path& file) {
  std::vector<json> out;
  for (const auto& c : calls_of(tid)) {
    if (c["name"] != name) continue;
    for (const auto& io : c["io"]) {
      if (io.contains("file") && io["file"] == file.string()) {
        out.push_back(c);
        break;
      }
    }
  }
  return out;
}

}  // namespace

TEST(RecordSequence, ApplicationRanAndArchiveIsComplete) {
  const auto& r = recording();
  ASSERT_EQ(r.run.status, 0) << r.run.err;
  ASSERT_NE(r.main_tid, 0) << r.run.out;
  ASSERT_FALSE(r.archive.is_null());
  EXPECT_EQ(r.archive["properties"]["EZIOTRACE::STATUS"], "complete");
  EXPECT_EQ(r.archive["properties"]["EZIOTRACE::APPLICATION_END"], "exit status 0");
  // The recorder loaded the programs itself (no eziotraced).
  EXPECT_EQ(r.archive["properties"]["EZIOTRACE::RECORDING_PATH"], "in-process");
  // The workload and the child it waits for did run: their CPU time is counted.
  EXPECT_GT(r.archive["properties"]["EZIOTRACE::APPLICATION_CPU_NS"].get<uint64_t>(), 0u);
  EXPECT_NE(r.run.err.find(" s of CPU)"), std::string::npos) << r.run.err;
  for (auto layer : {"syscall", "process"}) {
    EXPECT_EQ(r.archive["properties"][std::string("EZIOTRACE::LOST::") + layer], 0) << layer;
  }
  EXPECT_NE(r.run.err.find("syscall"), std::string::npos) << "no summary on stderr";
}

TEST(RecordSequence, MainThreadWritesFsyncAndPreads) {
  const auto& r = recording();
  auto opens = calls_on(r.main_tid, "openat", r.data);
  ASSERT_EQ(opens.size(), 1u);
  int fd = opens[0]["syscall.result"];
  EXPECT_EQ(opens[0]["io"][0]["kind"], "IoCreateHandle");

  auto writes = calls_on(r.main_tid, "write", r.data);
  ASSERT_EQ(writes.size(), 100u);
  for (const auto& w : writes) {
    EXPECT_EQ(w["syscall.fd"], fd);
    EXPECT_EQ(w["syscall.bytes"], 65536);
    EXPECT_EQ(w["syscall.result"], 65536);
    EXPECT_EQ(w["io"][0]["kind"], "IoOperationBegin");
    EXPECT_EQ(w["io"][1]["kind"], "IoOperationComplete");
    EXPECT_EQ(w["io"][1]["matching_id"], w["call.id"]);
    EXPECT_LE(w["t0"].get<uint64_t>(), w["t1"].get<uint64_t>());
  }
  EXPECT_EQ(calls_on(r.main_tid, "fsync", r.data).size(), 1u);

  auto preads = calls_on(r.main_tid, "pread64", r.data);
  ASSERT_EQ(preads.size(), 10u);
  for (size_t i = 0; i < preads.size(); ++i) {
    EXPECT_EQ(preads[i]["syscall.offset"], i * 65536 + 512);
    EXPECT_EQ(preads[i]["syscall.bytes"], 4096);
    EXPECT_EQ(preads[i]["syscall.result"], 4096);
  }
  auto closes = calls_on(r.main_tid, "close", r.data);
  ASSERT_EQ(closes.size(), 1u);
  EXPECT_EQ(closes[0]["io"][0]["kind"], "IoDestroyHandle");
}

TEST(RecordSequence, SecondThreadHasItsOwnLocationInTheSameProcess) {
  const auto& r = recording();
  ASSERT_NE(r.reader_tid, r.main_tid);
  const auto& loc = r.archive["locations"][std::to_string(r.reader_tid)];
  EXPECT_EQ(loc["props"]["EZIOTRACE::TID"], r.reader_tid);
  EXPECT_EQ(loc["props"]["EZIOTRACE::PID"], r.main_tid);
  auto reads = calls_on(r.reader_tid, "read", r.data);
  ASSERT_EQ(reads.size(), 5u);
  for (const auto& c : reads) EXPECT_EQ(c["syscall.result"], 4096);
  // No call of the reader lands on the main thread, and the reverse.
  EXPECT_TRUE(calls_on(r.main_tid, "read", r.data).empty());
  EXPECT_TRUE(calls_on(r.reader_tid, "write", r.data).empty());
}

TEST(RecordSequence, ExecedChildIsFollowed) {
  const auto& r = recording();
  const auto& loc = r.archive["locations"][std::to_string(r.child_pid)];
  ASSERT_TRUE(loc.is_object()) << "no location for the child";
  EXPECT_EQ(loc["props"]["EZIOTRACE::PID"], r.child_pid);
  EXPECT_EQ(loc["props"]["EZIOTRACE::PPID"], r.main_tid);
  EXPECT_NE(loc["group"].get<std::string>().find("write3"), std::string::npos) << loc["group"];
  auto writes = calls_on(r.child_pid, "write", r.child_file);
  ASSERT_EQ(writes.size(), 3u);
  for (const auto& w : writes) EXPECT_EQ(w["syscall.result"], 1000);
}

TEST(RecordSequence, OnlyTheTargetTreeIsRecorded) {
  const auto& r = recording();
  std::set<int> pids;
  for (const auto& [id, loc] : r.archive["locations"].items()) {
    if (loc["props"].contains("EZIOTRACE::PID")) {
      pids.insert(loc["props"]["EZIOTRACE::PID"].get<int>());
    } else {  // the only locations of no process are the block devices the tree used
      EXPECT_EQ(loc["group"].get<std::string>().rfind("block ", 0), 0u) << loc["group"];
    }
  }
  EXPECT_EQ(pids, (std::set<int>{r.main_tid, r.child_pid}));
}

// The analyzers on a real recording agree with an independent reader (python3-otf2) call for call.
TEST(RecordSequence, AnalyzersAgreeWithAnIndependentReader) {
  const auto& r = recording();
  auto anchor = (r.dir / "trace" / "eziotrace.otf2").string();
  std::map<std::string, long> count;
  long writes = 0, written = 0, reads = 0, read_bytes = 0;
  const std::set<std::string> write_calls = {"write", "pwrite64", "writev", "pwritev", "pwritev2"};
  const std::set<std::string> read_calls = {"read", "pread64", "readv", "preadv", "preadv2"};
  for (const auto& [id, loc] : r.archive["locations"].items()) {
    for (const auto& c : loc["calls"]) {
      std::string name = c["name"];
      ++count[name];
      long result = c["syscall.result"];
      if (result < 0) continue;
      if (write_calls.count(name)) ++writes, written += result;
      if (read_calls.count(name)) ++reads, read_bytes += result;
    }
  }
  ASSERT_GE(count["pread64"], 10);
  auto profile = ezio::test::eziotrace({"profile", "--total", "--all", "--json", anchor});
  ASSERT_EQ(profile.status, 0) << profile.err;
  std::map<std::string, long> profiled;
  json profile_json = json::parse(profile.out);
  for (const auto& row : profile_json["profile"]) {
    if (row["layer"] == "syscall") {
      profiled[row["function"].get<std::string>()] = row["count"].get<long>();
    }
  }
  EXPECT_GE(profiled["pread64"], 10);
  for (const auto& [name, n] : count) EXPECT_EQ(profiled[name], n) << name;

  auto layers = ezio::test::eziotrace({"layers", "--all", "--json", anchor});
  ASSERT_EQ(layers.status, 0) << layers.err;
  json layers_json = json::parse(layers.out);
  int syscall_rows = 0;
  for (const auto& row : layers_json["layers"]) {
    if (row["layer"] != "Syscall") continue;
    ++syscall_rows;
    EXPECT_EQ(row["writes"], writes);
    EXPECT_EQ(row["write_bytes"], written);
    EXPECT_EQ(row["reads"], reads);
    EXPECT_EQ(row["read_bytes"], read_bytes);
  }
  EXPECT_EQ(syscall_rows, 1);
  EXPECT_GE(written, 100 * 65536 + 3 * 1000);
}
