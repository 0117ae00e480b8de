// SPDX-License-Identifier: GPL-2.0-only
// The OTF2 writing of the recorder, on synthetic records: round trip through an independent reader.
#include "recorder/archive/kernel_archive.h"

#include <gtest/gtest.h>
#include <sys/syscall.h>

#include <cstring>

#include "run.h"

using namespace ezio::recorder;

namespace {

constexpr uint32_t kPid = 1000;

ezio_syscall_rec call(uint32_t tid, uint32_t nr, uint64_t t0, uint64_t t1, int64_t fd,
                      uint64_t count, int64_t ret, uint64_t id, int64_t offset = -1) {
  ezio_syscall_rec r{};
  r.h = {EZIO_RECORD_VERSION, EZIO_REC_SYSCALL, EZIO_LAYER_SYSCALL, sizeof(r), kPid, tid};
  r.call_id = id;
  r.t_enter = t0;
  r.t_exit = t1;
  r.fd = fd;
  r.count = count;
  r.ret = ret;
  r.offset = offset;
  r.nr = nr;
  return r;
}

void add_open(RecordStore& s, uint32_t pid, uint32_t tid, uint64_t t0, const char* path, int fd,
              uint64_t id) {
  ezio_open_rec r{};
  r.sc = call(tid, SYS_openat, t0, t0 + 10, -100, 0, fd, id);
  r.sc.h.pid = pid;
  r.sc.h.kind = EZIO_REC_OPEN;
  r.sc.h.size = sizeof(r);
  r.open_flags = 0101;  // O_WRONLY | O_CREAT
  std::strcpy(r.path, path);
  s.add(&r, sizeof(r));
}

template <typename T>
void add(RecordStore& s, T r) {
  s.add(&r, sizeof(r));
}

// A vfs_write of call `id` on inode 12 (file key 0xabc) of ext4.
ezio_vfs_rec vfs(uint64_t id, uint64_t t0, uint64_t t1) {
  ezio_vfs_rec v{};
  v.h = {EZIO_RECORD_VERSION, EZIO_REC_VFS, EZIO_LAYER_VFS, sizeof(v), kPid, kPid};
  v.call_id = id;
  v.t_enter = t0;
  v.t_exit = t1;
  v.file_key = 0xabc;
  v.ino = 12;
  v.ret = 10;
  v.op = EZIO_VFS_WRITE;
  std::strcpy(v.fstype, "ext4");
  return v;
}

RecordingInfo info_for(uint32_t root) {
  RecordingInfo info;
  info.root_pid = root;
  info.command = {"/bin/app", "x"};
  info.cwd = "/work/dir";
  info.start_monotonic_ns = 500;
  info.end_monotonic_ns = 100000;
  info.lost[EZIO_LAYER_SYSCALL] = 3;
  info.stdio_paths = {"/dev/null", "/dev/pts/1", "/dev/pts/1"};
  return info;
}

}  // namespace

TEST(KernelArchive, RecordsArriveOutOfOrderButEachLocationIsSorted) {
  RecordStore s;
  add_open(s, kPid, kPid, 900, "out.dat", 3, 1);  // relative: made absolute against cwd
  // Thread 1001's records arrive before earlier ones of thread 1000, and in reverse order.
  add(s, call(1001, SYS_read, 3000, 3100, 0, 10, 10, 5));
  add(s, call(1001, SYS_read, 2000, 2100, 0, 10, 10, 4));
  add(s, call(kPid, SYS_write, 1500, 1600, 3, 4096, 4096, 3));
  add(s, call(kPid, SYS_write, 1000, 1100, 3, 4096, 4096, 2));
  add(s, call(kPid, SYS_pwrite64, 1700, 1800, 3, 100, -28, 6, 8192));  // ENOSPC

  auto dir = ezio::test::scratch_dir("archive_sorted");
  ArchiveSummary sum = write_kernel_archive(dir, s, info_for(kPid));
  EXPECT_EQ(sum.layers[EZIO_LAYER_SYSCALL].events, 6u);
  EXPECT_EQ(sum.layers[EZIO_LAYER_SYSCALL].writes, 2u);
  EXPECT_EQ(sum.layers[EZIO_LAYER_SYSCALL].bytes_written, 8192u);
  EXPECT_EQ(sum.threads, 2u);

  auto j = ezio::test::dump_archive(dir / "eziotrace.otf2");
  ASSERT_FALSE(j.is_null());
  EXPECT_EQ(j["properties"]["EZIOTRACE::LOST::syscall"], 3);
  EXPECT_EQ(j["properties"]["EZIOTRACE::STATUS"], "complete");
  EXPECT_EQ(j["clock"]["offset"], 500);
  auto& main_calls = j["locations"]["1000"]["calls"];
  ASSERT_EQ(main_calls.size(), 4u);
  EXPECT_EQ(main_calls[0]["name"], "openat");
  EXPECT_EQ(main_calls[0]["io"][0]["kind"], "IoCreateHandle");
  EXPECT_EQ(main_calls[0]["io"][0]["file"], "/work/dir/out.dat");
  EXPECT_EQ(main_calls[1]["t0"], 1000);
  EXPECT_EQ(main_calls[2]["t0"], 1500);
  EXPECT_EQ(main_calls[1]["io"][1]["file"], "/work/dir/out.dat");
  EXPECT_EQ(main_calls[1]["io"][1]["bytes_result"], 4096);
  EXPECT_EQ(main_calls[3]["syscall.offset"], 8192);
  EXPECT_EQ(main_calls[3]["syscall.result"], -28);
  EXPECT_EQ(main_calls[3]["io"][1]["kind"], "IoOperationCancelled");
  auto& reader_calls = j["locations"]["1001"]["calls"];
  ASSERT_EQ(reader_calls.size(), 2u);
  EXPECT_EQ(reader_calls[0]["call.id"], 4);
  EXPECT_EQ(reader_calls[1]["call.id"], 5);
  // fd 0 of the root process was open before tracing: it is stdin as the recorder saw it.
  EXPECT_EQ(reader_calls[0]["io"][0]["file"], "/dev/null");
}

TEST(KernelArchive, ForkedChildInheritsDescriptorsAndGetsItsOwnGroup) {
  RecordStore s;
  add_open(s, kPid, kPid, 100, "/data/f", 4, 1);
  ezio_proc_rec fork{};
  fork.h = {EZIO_RECORD_VERSION, EZIO_REC_FORK, EZIO_LAYER_PROCESS, sizeof(fork), 2000, 2000};
  fork.ts = 200;
  fork.ppid = kPid;
  fork.parent_tid = kPid;
  std::strcpy(fork.comm, "app");
  add(s, fork);
  auto w = call(2000, SYS_write, 300, 400, 4, 10, 10, 2);
  w.h.pid = 2000;
  add(s, w);

  auto dir = ezio::test::scratch_dir("archive_fork");
  write_kernel_archive(dir, s, info_for(kPid));
  auto j = ezio::test::dump_archive(dir / "eziotrace.otf2");
  ASSERT_FALSE(j.is_null());
  auto& child = j["locations"]["2000"];
  EXPECT_EQ(child["props"]["EZIOTRACE::PID"], 2000);
  EXPECT_EQ(child["props"]["EZIOTRACE::PPID"], 1000);
  ASSERT_EQ(child["calls"].size(), 1u);
  EXPECT_EQ(child["calls"][0]["io"][0]["file"], "/data/f");
  EXPECT_EQ(child["calls"][0]["io"][0]["handle"], "/data/f [pid 2000 fd 4]");
}

// While the application runs the archive is written in batches: a VFS record taken in one batch
// nests in its syscall taken in the next; the file record that names its path may come after it;
// a VFS record whose syscall never comes (lost) stands alone once a later call of its thread is
// written.
TEST(KernelArchive, WrittenInBatchesAsRecordsArrive) {
  RecordStore s;
  auto dir = ezio::test::scratch_dir("archive_batches");
  RecordingInfo info = info_for(kPid);  // read again by finish(): it must outlive the archive
  KernelArchive archive(dir, info);
  add(s, vfs(1, 500, 600));  // its write's record was lost
  add(s, vfs(2, 1010, 1090));
  archive.write_settled(s, 2000);  // no call yet: both wait
  add(s, call(kPid, SYS_write, 1000, 1100, 3, 10, 10, 2));
  ezio_file_rec f{};
  f.h = {EZIO_RECORD_VERSION, EZIO_REC_FILE, EZIO_LAYER_VFS, sizeof(f), kPid, kPid};
  f.file_key = 0xabc;
  f.ino = 12;
  f.depth = 3;
  f.mount_depth = 3;
  std::strcpy(f.names[0], "f");
  std::strcpy(f.names[1], "data");
  std::strcpy(f.names[2], "/");
  add(s, f);
  add(s, call(kPid, SYS_write, 3000, 3100, 3, 10, 10, 3));
  archive.write_settled(s, 2000);  // call 2 ended before 2000, call 3 did not
  EXPECT_EQ(s.syscalls().size(), 1u);
  ArchiveSummary sum = archive.finish(s);
  EXPECT_EQ(sum.layers[EZIO_LAYER_SYSCALL].events, 2u);
  EXPECT_EQ(sum.layers[EZIO_LAYER_VFS].events, 2u);

  auto j = ezio::test::dump_archive(dir / "eziotrace.otf2");
  ASSERT_FALSE(j.is_null());
  auto& loc = j["locations"]["1000"];
  EXPECT_EQ(loc["other_regions"]["vfs:vfs_write"], 2);
  auto& calls = loc["calls"];
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0]["call.id"], 2);
  ASSERT_EQ(calls[0]["inside"].size(), 1u);
  EXPECT_EQ(calls[0]["inside"][0]["name"], "vfs_write");
  EXPECT_EQ(calls[0]["inside"][0]["vfs.path"], "/data/f");
  EXPECT_EQ(calls[0]["inside"][0]["t0"], 1010);
  EXPECT_FALSE(calls[1].contains("inside"));
}

// The recorder drains the ring buffer while a long batch is written (`meanwhile`): what arrives
// then waits in the store for the next batch and is written in its place, none of it twice.
TEST(KernelArchive, RecordsArrivingWhileABatchIsWrittenGoToTheNext) {
  RecordStore s;
  auto dir = ezio::test::scratch_dir("archive_meanwhile");
  RecordingInfo info = info_for(kPid);
  KernelArchive archive(dir, info);
  constexpr uint64_t kBatch = 10'000;  // more than one call of meanwhile
  for (uint64_t i = 0; i < kBatch; ++i)
    add(s, call(kPid, SYS_write, 10 * i, 10 * i + 5, 3, 1, 1, i + 1));
  uint64_t arrived = 0;
  archive.write_settled(s, 10 * kBatch, [&] {
    uint64_t t = 10 * (kBatch + arrived);
    add(s, call(kPid, SYS_write, t, t + 5, 3, 1, 1, kBatch + arrived + 1));
    ++arrived;
  });
  EXPECT_GE(arrived, 2u);
  EXPECT_EQ(s.syscalls().size(), arrived);  // held, not written yet
  ArchiveSummary sum = archive.finish(s);
  EXPECT_EQ(sum.layers[EZIO_LAYER_SYSCALL].events, kBatch + arrived);

  auto j = ezio::test::dump_archive(dir / "eziotrace.otf2");
  ASSERT_FALSE(j.is_null());
  auto& calls = j["locations"]["1000"]["calls"];
  ASSERT_EQ(calls.size(), kBatch + arrived);
  for (uint64_t i = 0; i < calls.size(); ++i) ASSERT_EQ(calls[i]["call.id"], i + 1) << i;
}

// Block requests arrive when they complete, in any order; each device's events are written in time
// order while the recording goes on. A request slower than the horizon (5 s) arrives after later
// events were written: its first events move to their time, its queue and service times stay.
TEST(KernelArchive, BlockRequestsWrittenInTimeOrderAcrossBatches) {
  constexpr uint64_t kS = 1'000'000'000;
  auto request = [](uint64_t queued, uint64_t issued, uint64_t done) {
    ezio_block_rec b{};
    b.h = {EZIO_RECORD_VERSION, EZIO_REC_BLOCK, EZIO_LAYER_BLOCK, sizeof(b), kPid, kPid};
    b.dev = (250u << 20) | 250;
    std::strcpy(b.disk, "fake0");
    b.t_queue = queued;
    b.t_issue = issued;
    b.t_complete = done;
    b.bytes = 4096;
    b.cmd_flags = 1;  // write
    return b;
  };
  RecordStore s;
  RecordingInfo info = info_for(kPid);
  auto dir = ezio::test::scratch_dir("archive_block_batches");
  KernelArchive archive(dir, info);
  add(s, request(2 * kS, 2 * kS + 10, 2 * kS + 20));  // #0
  archive.write_settled(s, 9 * kS);                   // writes what is before 4 s: #0
  add(s, request(3 * kS, 3 * kS + 10, 10 * kS));      // #1: slower than 5 s, queued before #2
  add(s, request(5 * kS, 5 * kS + 10, 5 * kS + 20));  // #2
  add(s, request(1 * kS, 1 * kS + 10, 10 * kS));      // #3: queued before #0 was written
  ArchiveSummary sum = archive.finish(s);
  EXPECT_EQ(sum.layers[EZIO_LAYER_BLOCK].events, 4u);
  EXPECT_EQ(sum.layers[EZIO_LAYER_BLOCK].writes, 4u);

  auto j = ezio::test::dump_archive(dir / "eziotrace.otf2");  // fails on a time going back
  ASSERT_FALSE(j.is_null());
  const nlohmann::json* dev = nullptr;
  for (const auto& [id, loc] : j["locations"].items()) {
    if (loc["name"] == "block fake0") dev = &loc;
  }
  ASSERT_NE(dev, nullptr);
  const auto& io = (*dev)["loose_io"];
  ASSERT_EQ(io.size(), 12u);
  std::vector<std::pair<std::string, uint64_t>> got;
  for (const auto& e : io) got.emplace_back(e["kind"].get<std::string>(), e["t"].get<uint64_t>());
  using P = std::pair<std::string, uint64_t>;
  EXPECT_EQ(got[0], P("IoOperationBegin", 2 * kS));  // #0, written in the first batch
  EXPECT_EQ(got[2], P("IoOperationComplete", 2 * kS + 20));
  EXPECT_EQ(got[3], P("IoOperationBegin", 2 * kS + 20));  // #3, 1 s: moved after #0
  EXPECT_EQ(got[5], P("IoOperationBegin", 3 * kS));       // #1, exact: within the horizon
  EXPECT_EQ(got[7], P("IoOperationBegin", 5 * kS));       // #2
  EXPECT_EQ(got[11].second, 10 * kS);
}

// A dirty-throttling pause nests in the VFS event of the write it interrupted (by time, clamped
// into it); one outside any syscall (a write fault) stands alone; the kernel release is a property.
TEST(KernelArchive, ThrottlePausesNestInTheirWrite) {
  RecordStore s;
  add(s, call(kPid, SYS_write, 1000, 5000, 3, 4096, 4096, 7));
  add(s, vfs(7, 1100, 4900));
  auto pause = [](uint64_t id, uint64_t t0, uint64_t t1) {
    ezio_throttle_rec r{};
    r.h = {EZIO_RECORD_VERSION, EZIO_REC_THROTTLE, EZIO_LAYER_PAGECACHE, sizeof(r), kPid, kPid};
    r.call_id = id;
    r.t_enter = t0;
    r.t_exit = t1;
    r.pause = 5;
    r.dirtied = 32;
    std::strcpy(r.bdi, "7:3");
    return r;
  };
  add(s, pause(7, 2000, 4950));  // past its VFS event's end: clamped to it
  add(s, pause(0, 6000, 7000));

  auto dir = ezio::test::scratch_dir("archive_throttle");
  RecordingInfo info = info_for(kPid);
  info.kernel_release = "6.18.0-test";
  write_kernel_archive(dir, s, info);
  auto j = ezio::test::dump_archive(dir / "eziotrace.otf2");
  ASSERT_FALSE(j.is_null());
  EXPECT_EQ(j["properties"]["EZIOTRACE::KERNEL_RELEASE"], "6.18.0-test");
  auto& loc = j["locations"]["1000"];
  EXPECT_EQ(loc["other_regions"]["pagecache:balance_dirty_pages"], 2);
  ASSERT_EQ(loc["calls"].size(), 1u);
  auto& vfs = loc["calls"][0]["inside"][0];
  ASSERT_EQ(vfs["name"], "vfs_write");
  ASSERT_EQ(vfs["inside"].size(), 1u);
  auto& p = vfs["inside"][0];
  EXPECT_EQ(p["canonical"], "pagecache:balance_dirty_pages");
  EXPECT_EQ(p["t0"], 2000);
  EXPECT_EQ(p["t1"], 4900);
  EXPECT_EQ(p["pagecache.pause_jiffies"], 5);
  EXPECT_EQ(p["pagecache.dirtied"], 32);
  EXPECT_EQ(p["pagecache.bdi"], "7:3");
}

// Two threads' calls interleaved, reads without VFS records, VFS events on two files in turn, an
// FS event in some writes: each call gets its own records, on its own file, whatever the order
// they are looked up in.
TEST(KernelArchive, InterleavedThreadsEachCallGetsItsOwnRecords) {
  RecordStore s;
  auto on = [](ezio_vfs_rec v, uint32_t tid, uint64_t ino, const char* fstype) {
    v.h.tid = tid;
    v.ino = ino;
    v.file_key = ino * 16;
    std::strcpy(v.fstype, fstype);
    return v;
  };
  auto fs_in = [](uint64_t id, uint32_t tid, uint64_t t) {
    ezio_fs_rec f{};
    f.h = {EZIO_RECORD_VERSION, EZIO_REC_FS, EZIO_LAYER_FS, sizeof(f), kPid, tid};
    f.call_id = id;
    f.t_enter = f.t_exit = t;
    f.ino = 12;
    f.bytes = 1;
    f.op = EZIO_FS_TP_EXT4_DA_WRITE_END;
    f.flags = EZIO_FSF_POINT;
    return f;
  };
  // Thread 1000: a read with no VFS record (10), a write with VFS and FS (11), a read of another
  // file (14). Thread 1001, in between: a write with VFS (12), a read with none (13).
  add(s, call(kPid, SYS_read, 1000, 1100, 0, 1, 1, 10));
  add(s, call(1001, SYS_write, 1050, 1150, 4, 1, 1, 12));
  add(s, on(vfs(12, 1060, 1140), 1001, 12, "ext4"));
  add(s, call(kPid, SYS_write, 1200, 1300, 3, 1, 1, 11));
  add(s, on(vfs(11, 1210, 1290), kPid, 12, "ext4"));
  add(s, fs_in(11, kPid, 1250));
  add(s, call(1001, SYS_read, 1220, 1240, 5, 1, 0, 13));
  add(s, call(kPid, SYS_read, 1400, 1500, 0, 1, 1, 14));
  add(s, on(vfs(14, 1410, 1490), kPid, 99, "devtmpfs"));

  auto dir = ezio::test::scratch_dir("archive_interleaved");
  write_kernel_archive(dir, s, info_for(kPid));
  auto j = ezio::test::dump_archive(dir / "eziotrace.otf2");
  ASSERT_FALSE(j.is_null());
  auto& a = j["locations"]["1000"]["calls"];
  ASSERT_EQ(a.size(), 3u);
  EXPECT_FALSE(a[0].contains("inside") && !a[0]["inside"].empty());
  ASSERT_EQ(a[1]["inside"].size(), 1u);
  EXPECT_EQ(a[1]["inside"][0]["vfs.inode"], 12);
  EXPECT_EQ(a[1]["inside"][0]["vfs.fstype"], "ext4");
  ASSERT_EQ(a[1]["inside"][0]["inside"].size(), 1u);
  EXPECT_EQ(a[1]["inside"][0]["inside"][0]["fs.inode"], 12);
  ASSERT_EQ(a[2]["inside"].size(), 1u);
  EXPECT_EQ(a[2]["inside"][0]["vfs.inode"], 99);
  EXPECT_EQ(a[2]["inside"][0]["vfs.fstype"], "devtmpfs");
  auto& b = j["locations"]["1001"]["calls"];
  ASSERT_EQ(b.size(), 2u);
  ASSERT_EQ(b[0]["inside"].size(), 1u);
  EXPECT_EQ(b[0]["inside"][0]["vfs.inode"], 12);
  EXPECT_TRUE(b[0]["inside"][0]["inside"].empty());
  EXPECT_FALSE(b[1].contains("inside") && !b[1]["inside"].empty());
}
