// The block and page-cache layers against an exact oracle: a private loop device whose
// /sys/block/<dev>/stat counts every request it completed, and workloads whose I/O is known.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>

#include "loop_fs.h"
#include "run.h"

namespace ezio::test {
namespace {

using nlohmann::json;

struct Recording {
  json trace;  // tests/kernel/read_trace.py's view of the archive
  long tid = 0;
  long stat_ios = -1;
};

long value_of(const std::string& out, const std::string& key) {
  auto at = out.find(key + "=");
  if (at == std::string::npos)
    throw std::runtime_error("workload did not print " + key + ": " + out);
  return std::stol(out.substr(at + key.size() + 1));
}

// Records `io_workload args...` with all layers and reads the archive back.
Recording record(const LoopFs& fs, const std::vector<std::string>& args) {
  auto out = fs.mount_point().parent_path() / "trace";
  std::vector<std::string> argv{EZIO_RECORDER, "record", "-f",         "-o",
                                out.string(),  "--",     EZIO_WORKLOAD};
  argv.insert(argv.end(), args.begin(), args.end());
  Run r = run(argv);
  if (r.status != 0) throw std::runtime_error("eziotrace record failed: " + r.err + r.out);
  Recording rec;
  rec.tid = value_of(r.out, "tid");
  if (r.out.find("stat_ios=") != std::string::npos) rec.stat_ios = value_of(r.out, "stat_ios");
  std::string text =
      must_run({"/usr/bin/python3", EZIO_READ_TRACE, (out / "eziotrace.otf2").string()});
  rec.trace = json::parse(text);
  return rec;
}

void workload(const std::vector<std::string>& args) {
  std::vector<std::string> argv{EZIO_WORKLOAD};
  argv.insert(argv.end(), args.begin(), args.end());
  must_run(argv);
}

std::vector<json> requests(const json& trace, const std::string& op) {
  std::vector<json> out;
  for (const auto& b : trace["block"]) {
    if (b["op"] == op) out.push_back(b);
  }
  return out;
}

json pagecache_of(const Recording& r) {
  auto key = std::to_string(r.tid);
  if (!r.trace["pagecache"].contains(key)) throw std::runtime_error("no page-cache counters");
  return r.trace["pagecache"][key];
}

constexpr int kWrites = 16;
constexpr long kBlock = 64 * 1024;

class ODirect : public ::testing::TestWithParam<std::string> {};

// Every request the device completed during the run is in the trace, attributed to the writing
// thread and to the pwrite64 call that caused it.
TEST_P(ODirect, RequestsMatchDiskStatsAndAttributeToTheThread) {
  LoopFs fs(GetParam());
  auto file = (fs / "f").string();
  must_run({"dd", "if=/dev/zero", "of=" + file, "bs=64k", "count=" + std::to_string(kWrites)});
  must_run({"sync"});
  Recording r = record(fs, {"odirect", file, std::to_string(kWrites), fs.device()});
  // Requests on other devices are the workload's too (its program paged in from the root disk
  // after a rebuild): attributed to it, but not part of the loop device's count.
  nlohmann::json block = nlohmann::json::array();
  for (const auto& b : r.trace["block"]) {
    EXPECT_EQ(b["tid"], r.tid) << b.dump();
    if (b["device"] == fs.device()) block.push_back(b);
  }
  EXPECT_EQ(long(block.size()), r.stat_ios) << block.dump(1);
  EXPECT_EQ(long(requests(r.trace, "write").size()), kWrites);
  for (const auto& b : block) {
    EXPECT_EQ(b["tid"], r.tid);
    EXPECT_EQ(b["cause"], "submitter");
    if (b["op"] == "write") {
      EXPECT_EQ(b["bytes"], kBlock);
      auto call = r.trace["calls"][std::to_string(b["call_id"].get<long>())];
      EXPECT_EQ(call["tid"], r.tid);
      EXPECT_EQ(call["region"], "pwrite64");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(FileSystems, ODirect, ::testing::Values("ext4", "xfs", "btrfs"));

// fsync: the data goes out from the writing thread itself; the journal (jbd2) is not the
// target's and is only counted.
TEST(Buffered, FsyncWritesAttributedToTheWriter) {
  LoopFs fs("ext4");
  Recording r = record(fs, {"buffered-fsync", (fs / "g").string(), "64"});
  long bytes = 0;
  for (const auto& b : requests(r.trace, "write")) {
    EXPECT_EQ(b["tid"], r.tid);
    bytes += b["bytes"].get<long>();
  }
  EXPECT_GE(bytes, 64 * kBlock);
  EXPECT_GE(pagecache_of(r)["pagecache.dirtied"].get<long>(), 64 * kBlock / 4096);
}

// syncfs hands the writeback to the flusher kworker: the requests it submits are attributed to
// the thread that dirtied the pages, through the inode.
TEST(Buffered, KernelThreadWritebackAttributedToTheDirtier) {
  LoopFs fs("ext4");
  Recording r = record(fs, {"buffered-syncfs", (fs / "g").string(), "64"});
  long bytes = 0;
  int by_writeback = 0;
  for (const auto& b : requests(r.trace, "write")) {
    EXPECT_EQ(b["tid"], r.tid);
    EXPECT_EQ(b["pid"], r.tid);
    bytes += b["bytes"].get<long>();
    if (b["cause"] == "writeback") ++by_writeback;
  }
  EXPECT_GE(bytes, 64 * kBlock);
  EXPECT_GT(by_writeback, 0) << r.trace["block"].dump(1);
}

// Cold reads miss and go to the device; the same reads again hit and do not.
TEST(PageCache, ColdReadsMissWarmReadsHit) {
  LoopFs fs("ext4");
  auto file = (fs / "r").string();
  must_run({"dd", "if=/dev/urandom", "of=" + file, "bs=64k", "count=64"});
  workload({"drop", file, "0"});
  Recording cold = record(fs, {"read", file, "64"});
  auto pc = pagecache_of(cold);
  EXPECT_GT(pc["pagecache.misses"].get<long>() + pc["pagecache.readahead"].get<long>(), 0);
  EXPECT_GE(pc["pagecache.misses"].get<long>() + pc["pagecache.readahead"].get<long>() +
                pc["pagecache.hits"].get<long>(),
            64 * kBlock / 4096);
  auto reads = requests(cold.trace, "read");
  EXPECT_FALSE(reads.empty());
  long bytes = 0;
  for (const auto& b : reads) {
    EXPECT_EQ(b["tid"], cold.tid);
    bytes += b["bytes"].get<long>();
  }
  EXPECT_GE(bytes, 64 * kBlock);

  // Warm: the file's pages held in the cache by an untraced process, so the claim does not rest
  // on nothing having evicted pages since the cold pass (this machine's DAMON pageout did). The
  // page-cache counters are per thread, so they include the program's own page-ins; the block
  // layer shows the file itself: no read reaches its device.
  ezio::test::Background pin({EZIO_WORKLOAD, "pin", file, "64"}, "pinned");
  Recording warm = record(fs, {"read", file, "64"});
  auto wpc = pagecache_of(warm);
  EXPECT_GE(wpc["pagecache.hits"].get<long>(), 64 * kBlock / 4096);
  for (const auto& b : requests(warm.trace, "read")) {
    EXPECT_NE(b["device"], fs.device()) << warm.trace["block"].dump(1);
  }
}

// mmap I/O: no read syscall, yet faults and block reads attributed to the process.
TEST(PageCache, MmapReadFaultsAndReadsAttributed) {
  LoopFs fs("ext4");
  auto file = (fs / "m").string();
  must_run({"dd", "if=/dev/urandom", "of=" + file, "bs=64k", "count=64"});
  workload({"drop", file, "0"});
  Recording r = record(fs, {"mmap-read", file, "64"});
  EXPECT_GT(pagecache_of(r)["pagecache.faults"].get<long>(), 0);
  auto reads = requests(r.trace, "read");
  EXPECT_FALSE(reads.empty());
  for (const auto& b : reads) {
    EXPECT_EQ(b["tid"], r.tid);
    EXPECT_EQ(b["cause"], "submitter");
  }
}

// Pages the target read, evicted by another process (as kswapd or a neighbour's reclaim would):
// not the target's own evictions, yet counted for the thread whose pages they were.
TEST(PageCache, EvictionsByOthersCountedForTheOwner) {
  LoopFs fs("ext4");
  auto file = (fs / "e").string();
  must_run({"dd", "if=/dev/urandom", "of=" + file, "bs=64k", "count=64"});
  workload({"drop", file, "0"});
  std::atomic<bool> done = false;
  std::thread evictor([&] {  // this test process is not traced
    while (!done) {
      int fd = open(file.c_str(), O_RDONLY);
      if (fd >= 0) {
        posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
        close(fd);
      }
      usleep(20 * 1000);
    }
  });
  Recording r;
  try {
    r = record(fs, {"read-until-evicted", file, "64"});
  } catch (...) {
    done = true;
    evictor.join();
    throw;
  }
  done = true;
  evictor.join();
  auto pc = pagecache_of(r);
  EXPECT_EQ(pc["pagecache.evicted"].get<long>(), 0);
  // Every page the thread brought in was evicted by the other process before it ended.
  EXPECT_GE(pc["reclaimed"].get<long>(), 64 * kBlock / 4096);
  EXPECT_GE(pc["reclaimed"].get<long>(),
            pc["pagecache.misses"].get<long>() + pc["pagecache.readahead"].get<long>());
}

// Another process writing to the same device during the recording: its requests are counted as
// unattributed, none is recorded.
TEST(Block, UnrelatedProcessIsNotRecorded) {
  LoopFs fs("ext4");
  auto file = (fs / "f").string();
  must_run({"dd", "if=/dev/zero", "of=" + file, "bs=64k", "count=" + std::to_string(kWrites)});
  must_run({"sync"});
  auto other = (fs / "other").string();
  // One process writing all the time, so that it has requests in flight during the recording
  ezio::test::Background noise({EZIO_WORKLOAD, "odirect-forever", other, "16"});
  usleep(200 * 1000);  // the noise is running before the recording starts
  Recording r = record(fs, {"odirect-amid-noise", file, std::to_string(kWrites), fs.device()});
  ASSERT_GT(r.stat_ios, kWrites) << "the other process did no I/O during the recording";
  EXPECT_EQ(long(requests(r.trace, "write").size()), kWrites);
  for (const auto& b : r.trace["block"]) EXPECT_EQ(b["tid"], r.tid);
  EXPECT_GT(r.trace["unattributed"]["block " + fs.device()].get<long>(), 0);
}

}  // namespace
}  // namespace ezio::test
