// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/decode/record_store.h"

#include <gtest/gtest.h>

#include <cstring>

using ezio::recorder::RecordStore;

namespace {

ezio_syscall_rec syscall_record(uint32_t tid) {
  ezio_syscall_rec r{};
  r.h = {EZIO_RECORD_VERSION, EZIO_REC_SYSCALL, EZIO_LAYER_SYSCALL, sizeof(r), 100, tid};
  r.call_id = 7;
  r.t_enter = 1000;
  r.t_exit = 2000;
  r.ret = 4096;
  r.fd = 3;
  r.count = 4096;
  r.offset = -1;
  r.nr = 1;
  return r;
}

}  // namespace

TEST(RecordStore, DecodesSyscallRecord) {
  RecordStore s;
  auto r = syscall_record(101);
  s.add(&r, sizeof(r));
  ASSERT_EQ(s.syscalls().size(), 1u);
  EXPECT_EQ(s.syscalls()[0].h.tid, 101u);
  EXPECT_EQ(s.syscalls()[0].count, 4096u);
  EXPECT_EQ(s.received()[EZIO_LAYER_SYSCALL], 1u);
  EXPECT_EQ(s.malformed(), 0u);
}

TEST(RecordStore, RejectsOtherVersionAndWrongSizes) {
  RecordStore s;
  auto r = syscall_record(101);
  r.h.version = EZIO_RECORD_VERSION + 1;
  s.add(&r, sizeof(r));
  r = syscall_record(101);
  s.add(&r, sizeof(r) - 8);  // size disagrees with the header
  r.h.size = sizeof(r) - 8;
  s.add(&r, sizeof(r) - 8);  // consistent, but too short for its kind
  s.add(&r, 3);              // shorter than a header
  r = syscall_record(101);
  r.h.kind = 99;
  s.add(&r, sizeof(r));
  EXPECT_TRUE(s.syscalls().empty());
  EXPECT_EQ(s.malformed(), 5u);
}

TEST(RecordStore, SyscallWithDerivedVfsPartBecomesTwoLayerRecords) {
  RecordStore s;
  ezio_syscall_vfs_rec r{};
  r.sc = syscall_record(101);
  r.sc.h.kind = EZIO_REC_SYSCALL_VFS;
  r.sc.h.size = sizeof(r);
  r.vfs.file_key = 0xffff888012345678ull;
  r.vfs.ino = 42;
  r.vfs.offset = 8192;
  r.vfs.dev = (8u << 20) | 1;
  r.vfs.op = EZIO_VFS_WRITE;
  std::strcpy(r.vfs.fstype, "ext4");
  s.add(&r, sizeof(r));
  ASSERT_EQ(s.syscalls().size(), 1u);
  EXPECT_EQ(s.syscalls()[0].h.kind, EZIO_REC_SYSCALL_VFS);
  EXPECT_EQ(s.syscalls()[0].call_id, 7u);
  ASSERT_EQ(s.vfs().size(), 1u);
  const ezio_vfs_rec& v = s.vfs()[0];
  EXPECT_EQ(v.h.layer, EZIO_LAYER_VFS);
  EXPECT_EQ(v.h.tid, 101u);
  EXPECT_EQ(v.call_id, 7u);
  EXPECT_EQ(v.t_enter, 1000u);
  EXPECT_EQ(v.t_exit, 2000u);
  EXPECT_EQ(v.ret, 4096);
  EXPECT_EQ(v.file_key, 0xffff888012345678ull);
  EXPECT_EQ(v.ino, 42u);
  EXPECT_EQ(v.offset, 8192);
  EXPECT_EQ(v.dev, (8u << 20) | 1);
  EXPECT_EQ(v.op, EZIO_VFS_WRITE);
  EXPECT_EQ(v.flags, EZIO_VFSF_DERIVED);
  EXPECT_STREQ(v.fstype, "ext4");
  EXPECT_TRUE(s.fs().empty()) << "hits == 0: the call had no FS tracepoint hits";
  EXPECT_EQ(s.received()[EZIO_LAYER_SYSCALL], 1u);
  EXPECT_EQ(s.received()[EZIO_LAYER_VFS], 1u);
  EXPECT_EQ(s.malformed(), 0u);
}

TEST(RecordStore, FsHitsInTheSyscallRecordBecomeOneMergedFsEvent) {
  RecordStore s;
  ezio_syscall_vfs_rec r{};
  r.sc = syscall_record(101);
  r.sc.h.kind = EZIO_REC_SYSCALL_VFS;
  r.sc.h.size = sizeof(r);
  r.sc.count = 65536;
  r.vfs.op = EZIO_VFS_WRITE;
  r.fs.t_first = 1100;
  r.fs.t_last = 1900;
  r.fs.ino = 42;
  r.fs.offset = 0;
  r.fs.bytes = 65536;
  r.fs.dev = 7;
  r.fs.hits = 16;
  r.fs.op = EZIO_FS_TP_EXT4_DA_WRITE_BEGIN;
  s.add(&r, sizeof(r));
  ASSERT_EQ(s.fs().size(), 1u);
  const ezio_fs_rec& f = s.fs()[0];
  EXPECT_EQ(f.h.layer, EZIO_LAYER_FS);
  EXPECT_EQ(f.call_id, 7u);
  EXPECT_EQ(f.t_enter, 1100u);
  EXPECT_EQ(f.t_exit, 1900u);
  EXPECT_EQ(f.bytes, 65536);
  EXPECT_EQ(f.hits, 16u);
  EXPECT_EQ(f.op, EZIO_FS_TP_EXT4_DA_WRITE_BEGIN);
  EXPECT_EQ(f.flags, EZIO_FSF_POINT | EZIO_FSF_RUN);
  EXPECT_EQ(s.received()[EZIO_LAYER_FS], 1u);
}

TEST(RecordStore, OpenPathIsBoundedEvenWithoutTerminator) {
  RecordStore s;
  ezio_open_rec r{};
  r.sc = syscall_record(5);
  r.sc.h.kind = EZIO_REC_OPEN;
  r.sc.h.size = sizeof(r);
  std::memset(r.path, 'a', sizeof(r.path));  // no NUL: a corrupt record
  s.add(&r, sizeof(r));
  ASSERT_EQ(s.opens().size(), 1u);
  EXPECT_EQ(s.opens()[0].path.size(), sizeof(r.path));
}

TEST(RecordStore, DecodesProcessRecords) {
  RecordStore s;
  ezio_proc_rec r{};
  r.h = {EZIO_RECORD_VERSION, EZIO_REC_FORK, EZIO_LAYER_PROCESS, sizeof(r), 200, 200};
  r.ppid = 100;
  r.is_thread = 0;
  std::strcpy(r.comm, "child");
  s.add(&r, sizeof(r));
  ASSERT_EQ(s.procs().size(), 1u);
  EXPECT_EQ(s.procs()[0].ppid, 100u);
  EXPECT_EQ(s.procs()[0].comm, "child");
  EXPECT_FALSE(s.procs()[0].is_thread);
}
