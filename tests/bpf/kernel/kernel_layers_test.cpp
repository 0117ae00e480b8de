// SPDX-License-Identifier: GPL-2.0-only
// The block and page-cache layers against an exact oracle: a private loop device whose
// /sys/block/<dev>/stat counts every request it completed, and workloads whose I/O is known.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>

#include "kernel_trace.h"
#include "loop_fs.h"
#include "run.h"

namespace ezio::test {
namespace {

using nlohmann::json;

// A file of `blocks` random 64 KiB blocks, written back and dropped from the page cache.
std::string cold_file(const LoopFs& fs, const std::string& name, int blocks) {
  auto file = (fs / name).string();
  must_run({"dd", "if=/dev/urandom", "of=" + file, "bs=64k", "count=" + std::to_string(blocks)});
  workload({"drop", file, "0"});
  return file;
}

constexpr int kWrites = 16;
constexpr long kBlock = 64 * 1024;

class ODirect : public ::testing::TestWithParam<std::string> {};

// Every request the device completed during the run is in the trace, with every sector it moved,
// attributed to the writing thread and to the pwrite64 call that caused it.
TEST_P(ODirect, RequestsMatchDiskStatsAndAttributeToTheThread) {
  LoopFs fs(GetParam());
  auto file = (fs / "f").string();
  must_run({"dd", "if=/dev/zero", "of=" + file, "bs=64k", "count=" + std::to_string(kWrites)});
  must_run({"sync"});
  Recording r = record(fs, {"odirect", file, std::to_string(kWrites), fs.device()});
  // Requests on other devices are the workload's too (its program paged in from the root disk
  // after a rebuild): attributed to it, but not part of the loop device's count.
  nlohmann::json block = nlohmann::json::array();
  long bytes = 0;
  for (const auto& b : r.trace["block"]) {
    EXPECT_EQ(b["tid"], r.tid) << b.dump();
    if (b["device"] != fs.device()) continue;
    block.push_back(b);
    bytes += b["bytes"].get<long>();
    EXPECT_EQ(b["shared_bytes"], 0) << b.dump();
  }
  EXPECT_EQ(long(block.size()), r.stat_ios) << block.dump(1);
  EXPECT_EQ(bytes, value_of(r.out, "stat_sectors") * 512) << block.dump(1);
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
  auto file = cold_file(fs, "r", 64);
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
  auto file = cold_file(fs, "m", 64);
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
  auto file = cold_file(fs, "e", 64);
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

// Metadata of a file system without journal is written back from the block device's own page
// cache, shared by every process on it. A bystander creating and removing thousands of files and
// syncing while the target writes one file and syncs: the target is charged its own data and
// nothing of the shared metadata, which is counted as unattributed.
TEST(Block, SharedMetadataWritebackIsNotCharged) {
  LoopFs fs("ext4-nojournal");
  auto storm_dir = fs / "storm";
  std::filesystem::create_directory(storm_dir);
  ezio::test::Background storm({EZIO_WORKLOAD, "metadata-storm", storm_dir.string(), "3000"},
                               "storming");
  constexpr long kBlocks = 64;
  Recording r = record(fs, {"buffered-syncfs", (fs / "g").string(), std::to_string(kBlocks)});
  long attributed = 0;
  for (const auto& b : requests(r.trace, "write")) {
    EXPECT_EQ(b["tid"], r.tid);
    if (b["device"] == fs.device()) attributed += b["bytes"].get<long>();
  }
  std::cout << "written " << kBlocks * kBlock << " bytes, attributed " << attributed
            << " bytes, unattributed requests "
            << r.trace["unattributed"].value("block " + fs.device(), 0L) << "\n";
  EXPECT_GE(attributed, kBlocks * kBlock);
  EXPECT_LE(attributed, kBlocks * kBlock + 16 * 1024) << r.trace["block"].dump(1);
  EXPECT_GT(r.trace["unattributed"]["block " + fs.device()].get<long>(), 10);
}

// A raw block device written by the target: its own data, not a file system's shared metadata,
// even though mkfs holds the device exclusively while it writes.
TEST(Block, RawDeviceWritesAreTheWriters) {
  LoopFs raw("raw");
  record_command(raw, {}, {"mkfs.ext4", "-q", "-F", "/dev/" + raw.device()});
  json trace = read_trace(raw);
  long attributed = 0;
  for (const auto& b : trace["block"]) {
    if (b["device"] == raw.device() && b["op"] == "write") attributed += b["bytes"].get<long>();
  }
  long unattributed = trace["unattributed"].value("block " + raw.device(), 0L);
  std::cout << "mkfs: " << attributed << " bytes of writes attributed, " << unattributed
            << " requests unattributed\n";
  EXPECT_GE(attributed, 64 * 1024) << trace["block"].dump(1);
}

// An fdatasync of a clean file sends the device nothing but an empty PREFLUSH request. The disk
// statistics count it twice: as a write of 0 sectors and as the flush the driver executed. The
// archive records the flush alone, and counts the empty request, which the block layer completed
// without issuing it, per device (docs/kernel-layers.md, Block).
TEST(Block, EmptyFlushIsAFlushNotAWrite) {
  LoopFs fs("ext4");
  auto file = (fs / "clean").string();
  must_run({"dd", "if=/dev/zero", "of=" + file, "bs=64k", "count=1"});
  must_run({"sync"});
  constexpr long kSyncs = 100;
  Recording r = record(fs, {"fdatasync-clean", file, std::to_string(kSyncs), fs.device()});
  EXPECT_EQ(value_of(r.out, "stat_writes"), kSyncs);
  EXPECT_EQ(value_of(r.out, "stat_write_sectors"), 0);
  EXPECT_EQ(value_of(r.out, "stat_flushes"), kSyncs);
  long flushes = 0, writes = 0;
  for (const auto& b : r.trace["block"]) {
    if (b["device"] != fs.device()) continue;
    EXPECT_EQ(b["tid"], r.tid);
    if (b["op"] == "flush") ++flushes;
    if (b["op"] == "write") ++writes;
  }
  // The workload's first fdatasync, before the counting, may add one.
  EXPECT_GE(flushes, kSyncs);
  EXPECT_LE(flushes, kSyncs + 1);
  EXPECT_EQ(writes, 0) << r.trace["block"].dump(1);
  // Each fdatasync's empty request, the first one's included: one per flush.
  json not_issued = r.trace.value("not_issued", json::object());
  EXPECT_EQ(not_issued.value("block " + fs.device(), json()), json(flushes)) << not_issued.dump();
}

// iomap's direct-I/O tracepoint carries no direction: it is taken from the call's iterator, so
// the FS row counts the reads and writes, none as "other".
TEST(Fs, DirectIoHasItsDirection) {
  LoopFs fs("ext4");
  record(fs, {"odirect-rw", (fs / "d").string(), "8"});
  json row = layers_row(fs, "FS");
  EXPECT_EQ(row["reads"], 8) << row.dump();
  EXPECT_EQ(row["writes"], 8) << row.dump();
  EXPECT_EQ(row["other"], 0) << row.dump();
}

// Relative paths name the file the kernel opened: after a chdir, and relative to a directory fd.
TEST(Files, RelativePathsAfterChdir) {
  LoopFs fs("ext4");
  auto dir = std::filesystem::canonical(fs.mount_point());
  Recording r = record(fs, {"chdir-open", dir.string(), "1"});
  const json& files = r.trace["files"];
  for (const char* f : {"sub/a", "b", "sub/c"}) {
    auto want = (dir / f).string();
    EXPECT_NE(std::find(files.begin(), files.end(), want), files.end())
        << want << " not in " << files.dump(1);
    EXPECT_EQ(r.trace["writes"].value(want, 0), 1) << r.trace["writes"].dump(1);
  }
}

// A descendant that outlives the command: recorded until it ends (--wait-children, on by default)
// or, when the wait is over first, counted in the summary and the archive as still running.
TEST(Processes, DescendantsOutlivingTheCommand) {
  LoopFs fs("ext4");
  auto late = (fs / "late").string();
  std::string script = "(sleep 2; echo x > " + late + ") & exit 0";
  ezio::test::Run waited = record_command(fs, {}, {"sh", "-c", script});
  json trace = read_trace(fs);
  EXPECT_EQ(trace["properties"]["EZIOTRACE::PROCESSES_RUNNING_AT_END"], 0);
  EXPECT_EQ(trace["writes"].value(late, 0), 1) << trace["writes"].dump(1);
  EXPECT_EQ(waited.err.find("still running"), std::string::npos) << waited.err;

  std::filesystem::remove(late);
  ezio::test::Run cut = record_command(fs, {"--wait-children=0.5"}, {"sh", "-c", script});
  trace = read_trace(fs);
  EXPECT_GE(trace["properties"]["EZIOTRACE::PROCESSES_RUNNING_AT_END"].get<long>(), 1);
  EXPECT_EQ(trace["writes"].value(late, 0), 0);
  EXPECT_NE(cut.err.find("still running when recording stopped"), std::string::npos) << cut.err;
  for (int i = 0; i < 50 && !std::filesystem::exists(late); ++i) usleep(100 * 1000);
}

// ext4's buffered reads pass no FS hook when only its tracepoints attach (no fentry, no kprobes):
// `layers` says so instead of counting 0, in every format; so for the user level, which a kernel
// recording does not see. The page-cache row gives the pages.
TEST(Layers, UnobservableOperationsAreSaidSo) {
  LoopFs fs("ext4");
  auto file = cold_file(fs, "r", 16);
  Recording r = record(fs, {"read", file, "16"});
  std::string probe = r.trace["properties"]["EZIOTRACE::PROBE::fs"];
  bool tracepoints_only = probe.find("ext4: tp_btf/") != std::string::npos;
  json row = layers_row(fs, "FS");
  if (tracepoints_only) {
    EXPECT_EQ(row["reads"], "not observed") << row.dump();
    EXPECT_EQ(row["read_bytes"], "not observed") << row.dump();
    auto anchor = (trace_dir(fs) / "eziotrace.otf2").string();
    std::string text = must_run({EZIO_RECORDER, "layers", anchor});
    EXPECT_NE(text.find("not observed"), std::string::npos) << text;
    std::string csv = must_run({EZIO_RECORDER, "layers", "--csv", anchor});
    EXPECT_NE(csv.find("FS,not observed,"), std::string::npos) << csv;
  } else {
    EXPECT_EQ(row["reads"], 16) << probe;
  }
  // `eziotrace record` runs no EZTrace: no user-level call was observed.
  json user = layers_row(fs, "User");
  EXPECT_EQ(user["writes"], "not observed") << user.dump();
  EXPECT_EQ(user["total_s"], nullptr) << user.dump();
  json pc = layers_row(fs, "Page cache");
  EXPECT_GE(pc["reads"].get<long>(), 16 * kBlock / 4096) << pc.dump();
  EXPECT_GE(pc["read_bytes"].get<long>(), 16 * kBlock) << pc.dump();
}

}  // namespace
}  // namespace ezio::test
