// SPDX-License-Identifier: GPL-2.0-only
// VFS and FS layers recorded for real on private loop devices with ext4, xfs and btrfs: exact
// numbers of VFS events nested in their syscalls, the file's path and file-system type, and the
// file system's own events nested in the VFS events. Needs root; never skips: a missing
// precondition fails the test with the reason.
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>

#include "loop_fs.h"
#include "run.h"

namespace fs = std::filesystem;

namespace {

struct Run {
  int status;
  std::string out;
};

Run run(const std::string& cmd) {
  Run r{-1, ""};
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  r.status = pclose(p);
  return r;
}

struct Summary {
  std::map<std::string, long> pairs, vfs;
  std::map<std::string, std::string> probes;
};

Summary record_workload(const ezio::test::LoopFs& lfs) {
  std::string out = (lfs.mount_point().parent_path() / "trace").string();  // beside the mount
  Run r = run(std::string(EZIO_BIN) + " record -o " + out + " -- " + EZIO_WORKLOAD + " " +
              lfs.mount_point().string());
  EXPECT_EQ(r.status, 0) << r.out;
  std::string archive = out + "/eziotrace.otf2";
  Run p = run("otf2-print " + archive + " > /dev/null");
  EXPECT_EQ(p.status, 0) << p.out;
  EXPECT_EQ(p.out.find("warning"), std::string::npos) << p.out;
  // python3-otf2 (tests/support/otf2_dump.py), which fails the test on a nesting or time-order
  // error.
  nlohmann::json dump = ezio::test::dump_archive(archive);
  Summary s;
  for (auto& [k, n] : dump["nesting"].items()) s.pairs[k] = n.get<long>();
  for (auto& [k, n] : dump["vfs_calls"].items()) s.vfs[k] = n.get<long>();
  static constexpr std::string_view kProbe = "EZIOTRACE::PROBE::";
  for (auto& [k, v] : dump["properties"].items()) {
    if (k.starts_with(kProbe)) s.probes[k.substr(kProbe.size())] = v.get<std::string>();
  }
  return s;
}

long at(const std::map<std::string, long>& m, const std::string& k) {
  auto it = m.find(k);
  return it == m.end() ? 0 : it->second;
}

void check_vfs(const Summary& s, const ezio::test::LoopFs& lfs, const std::string& type) {
  std::string data = lfs.mount_point().string() + "/data";
  // 16 writes, 16 reads and one fsync of data; 4 O_DIRECT pwrites of direct.
  EXPECT_EQ(at(s.vfs, "vfs:vfs_write|" + data + "|" + type), 16);
  EXPECT_EQ(at(s.vfs, "vfs:vfs_read|" + data + "|" + type), 16);
  EXPECT_EQ(at(s.vfs, "vfs:vfs_fsync_range|" + data + "|" + type), 1);
  EXPECT_EQ(at(s.vfs, "vfs:vfs_open|" + data + "|" + type), 2);
  EXPECT_EQ(at(s.vfs, "vfs:vfs_write|" + lfs.mount_point().string() + "/direct|" + type), 4);
  EXPECT_EQ(at(s.pairs, "syscall:fsync>vfs:vfs_fsync_range"), 1);
  EXPECT_EQ(at(s.pairs, "syscall:pwrite64>vfs:vfs_write"), 4);
  EXPECT_GE(at(s.pairs, "syscall:write>vfs:vfs_write"), 16);
  EXPECT_EQ(at(s.pairs, "syscall:write>vfs:vfs_write"), at(s.pairs,
                                                           "-"
                                                           ">syscall:write"))
      << "every write of the workload has exactly one VFS event inside";
  EXPECT_NE(s.probes.count("vfs"), 0u);
  EXPECT_NE(s.probes.count("fs"), 0u);
}

}  // namespace

TEST(Layers, PreconditionsHold) {
  ASSERT_EQ(geteuid(), 0u) << "the layer tests record with BPF and make loop devices: run as root";
  for (const char* tool : {"losetup", "mkfs.ext4", "mkfs.xfs", "mkfs.btrfs", "otf2-print"}) {
    EXPECT_EQ(run(std::string("command -v ") + tool).status, 0) << tool << " is missing";
  }
  EXPECT_EQ(run("/usr/bin/python3 -c 'import otf2'").status, 0) << "python3-otf2 is missing";
}

TEST(Layers, Ext4) {
  ezio::test::LoopFs lfs("ext4");
  Summary s = record_workload(lfs);
  check_vfs(s, lfs, "ext4");
  if (s.probes["fs"].find("ext4: tp_btf/") != std::string::npos) {
    // One delayed-allocation write_end per page, merged per call: one per 4 KiB write.
    EXPECT_EQ(at(s.pairs, "vfs:vfs_write>fs:ext4_da_write_end"), 16);
    EXPECT_EQ(at(s.pairs, "vfs:vfs_fsync_range>fs:ext4_sync_file"), 1);
    EXPECT_EQ(at(s.pairs, "vfs:vfs_write>fs:iomap_dio_write"), 4);
  } else {
    EXPECT_EQ(at(s.pairs, "vfs:vfs_write>fs:ext4_file_write_iter"), 20);
    EXPECT_EQ(at(s.pairs, "vfs:vfs_read>fs:ext4_file_read_iter"), 16);
    EXPECT_EQ(at(s.pairs, "vfs:vfs_fsync_range>fs:ext4_sync_file"), 1);
  }
}

TEST(Layers, Xfs) {
  ezio::test::LoopFs lfs("xfs");
  Summary s = record_workload(lfs);
  check_vfs(s, lfs, "xfs");
  if (s.probes["fs"].find("xfs: tp_btf/") != std::string::npos) {
    EXPECT_EQ(at(s.pairs, "vfs:vfs_write>fs:xfs_file_buffered_write"), 16);
    EXPECT_EQ(at(s.pairs, "vfs:vfs_read>fs:xfs_file_buffered_read"), 16);
    EXPECT_EQ(at(s.pairs, "vfs:vfs_fsync_range>fs:xfs_file_fsync"), 1);
    EXPECT_EQ(at(s.pairs, "vfs:vfs_write>fs:xfs_file_direct_write"), 4);
    // xfs's own direct-I/O tracepoint has the call: iomap's is not recorded a second time.
    EXPECT_EQ(at(s.pairs, "vfs:vfs_write>fs:iomap_dio_write"), 0);
  } else {
    EXPECT_EQ(at(s.pairs, "vfs:vfs_write>fs:xfs_file_write_iter"), 20);
    EXPECT_EQ(at(s.pairs, "vfs:vfs_read>fs:xfs_file_read_iter"), 16);
    EXPECT_EQ(at(s.pairs, "vfs:vfs_fsync_range>fs:xfs_file_fsync"), 1);
  }
}

TEST(Layers, Btrfs) {
  ezio::test::LoopFs lfs("btrfs");
  Summary s = record_workload(lfs);
  check_vfs(s, lfs, "btrfs");
  if (s.probes["fs"].find("btrfs: tp_btf/") != std::string::npos) {
    // btrfs's only file tracepoint on the call path; its direct I/O enters iomap through
    // __iomap_dio_rw, below the iomap_dio_rw_begin tracepoint, so there is none to nest.
    EXPECT_EQ(at(s.pairs, "vfs:vfs_fsync_range>fs:btrfs_sync_file"), 1);
    EXPECT_EQ(at(s.pairs, "vfs:vfs_write>fs:iomap_dio_write"), 0);
  } else {
    EXPECT_EQ(at(s.pairs, "vfs:vfs_write>fs:btrfs_file_write_iter"), 20);
    EXPECT_EQ(at(s.pairs, "vfs:vfs_fsync_range>fs:btrfs_sync_file"), 1);
  }
}
