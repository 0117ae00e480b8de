// SPDX-License-Identifier: GPL-2.0-only
// Exactness of every layer, one row per I/O shape × file system × the hook mode this kernel
// gives: each shape recorded alone on a private loop device, its figures compared with what the
// workload's calls returned and with the device's own counters (docs/kernel-layers.md, "What
// each layer observes").
//
// For each row: the syscall, VFS and FS layers moved the bytes the calls returned, on the file
// (FS: "not observed" where the hook mode has no FS event for the shape, never a number; for
// sendfile and splice, which name no file, the FS layer's total and "not observed" on the file);
// the page cache dirtied the pages the written range touches (none for O_DIRECT but on btrfs
// since 6.15, none for reads; a write cut short by a full disk up to a folio more); the block
// requests on the device (attributed to the target, or not) add up to the sectors
// /sys/block/<dev>/stat counted while the recording ran.
//
// Two settings from the environment, for the qemu guest's run (tests/qemu/guest-exactness.sh):
// EZIO_EXACTNESS_ROWS, a comma-separated list of row names, records only those rows;
// EZIO_EXACTNESS_HOOKS (fentry, kprobe or tracepoint) makes every row fail unless the VFS and the
// file system were recorded with that hook kind, so that a silent fallback cannot pass.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "figures.h"
#include "loop_fs.h"
#include "run.h"

namespace ezio::test {
namespace {

constexpr int64_t KiB = 1024, MiB = 1024 * KiB;
constexpr int64_t kReadFileSize = 16 * MiB;

struct Shape {
  const char* name;
  int64_t offset, len, count;
  std::vector<std::string> options;  // shape_io's: direct, append, vectors=N, via=CALL
  int64_t existing = 0;  // bytes the file holds beforehand (written, synced, out of the cache)
  bool disk_full = false;
  bool direct() const {
    return std::find(options.begin(), options.end(), "direct") != options.end();
  }
  // sendfile or splice: the syscall and VFS layers count no bytes for those calls (the syscall
  // layer's I/O calls are read, write and their vector forms; the derived VFS layer is made from
  // them), only the FS and the layers below.
  bool via() const {
    return std::any_of(options.begin(), options.end(),
                       [](const std::string& o) { return o.starts_with("via="); });
  }
};

const std::vector<Shape> kWrites = {
    {"1B", 0, 1, 1, {}},
    {"1B-unaligned", 5000, 1, 1, {}},
    {"4KiB", 0, 4 * KiB, 1, {}},
    {"4KiB-unaligned", 2048, 4 * KiB, 1, {}},
    {"512KiB-x10", 0, 512 * KiB, 10, {}},
    {"512KiB-x10-unaligned", 2048, 512 * KiB, 10, {}},
    {"8MiB", 0, 8 * MiB, 1, {}},
    {"8MiB-unaligned", 1000, 8 * MiB, 1, {}},
    {"append-100000-x3", 0, 100000, 3, {"append"}, 5000},
    {"pwritev-5-vectors-x2", 777, 15000, 2, {"vectors=5"}},
    {"odirect-512KiB-x4", 0, 512 * KiB, 4, {"direct"}},
    {"crosses-eof", MiB - 1000, 512 * KiB, 1, {}, MiB + 100},
    {"sendfile-512KiB-x4-unaligned", 2048, 512 * KiB, 4, {"via=sendfile"}},
    {"splice-64KiB-x8-unaligned", 1000, 64 * KiB, 8, {"via=splice"}},
    // Last: it leaves the disk full.
    {"short-disk-full-512KiB-x32", 0, 512 * KiB, 32, {}, 0, true},
};

const std::vector<Shape> kReads = {
    {"read-1B", 5000, 1, 1, {}},
    {"read-4KiB", 0, 4 * KiB, 1, {}},
    {"read-512KiB-x10-unaligned", 2048, 512 * KiB, 10, {}},
    {"read-64KiB-x128-readahead", 0, 64 * KiB, 128, {}},
    {"read-8MiB-unaligned", 1000, 8 * MiB, 1, {}},
    {"read-crosses-eof", kReadFileSize - 1000, MiB, 1, {}},
    {"preadv-4-vectors-x3", 777, 40000, 3, {"vectors=4"}},
    {"read-sendfile-512KiB-x4-unaligned", 2048, 512 * KiB, 4, {"via=sendfile"}},
    {"read-sendfile-crosses-eof", kReadFileSize - 1000, MiB, 1, {"via=sendfile"}},
    {"read-splice-64KiB-x8", 4 * KiB, 64 * KiB, 8, {"via=splice"}},
    {"read-splice-crosses-eof", kReadFileSize - 1000, 64 * KiB, 1, {"via=splice"}},
    {"read-odirect-512KiB-x4", 0, 512 * KiB, 4, {"direct"}},
    {"read-odirect-crosses-eof", kReadFileSize - 4 * KiB, 64 * KiB, 1, {"direct"}},
};

// The hook mode of file system `fs` in the recording: its part of EZIOTRACE::PROBE::fs.
std::string hook_mode(const std::string& probe, const std::string& fs) {
  auto at = probe.find(fs + ": ");
  std::string part = at == std::string::npos ? "" : probe.substr(at, probe.find(';', at) - at);
  if (part.find("fentry/fexit") != std::string::npos) return "fentry";
  if (part.find("kprobe/kretprobe") != std::string::npos) return "kprobe";
  if (part.find("tp_btf/") != std::string::npos) return "tracepoint";
  return "none";
}

// The hook kind of the VFS layer in the recording, from EZIOTRACE::PROBE::vfs.
std::string vfs_hook_mode(const std::string& probe) {
  if (probe.find("fentry/fexit") != std::string::npos) return "fentry";
  if (probe.find("kprobe/kretprobe") != std::string::npos) return "kprobe";
  return probe.empty() ? "none" : "tracepoint";
}

std::string env_or_empty(const char* name) {
  const char* v = getenv(name);
  return v ? v : "";
}

// Whether EZIO_EXACTNESS_ROWS (empty: every row) selects the row.
bool row_selected(const Shape& shape) {
  std::string rows = env_or_empty("EZIO_EXACTNESS_ROWS");
  if (rows.empty()) return true;
  std::string padded = "," + rows + ",";
  return padded.find("," + std::string(shape.name) + ",") != std::string::npos;
}

// Whether the FS layer has an event for the shape in that mode (docs/kernel-layers.md): the exact
// hooks see every call; the tracepoints see ext4's buffered writes and its direct I/O when iomap's
// tracepoint is there (not on 6.1), all of xfs's calls, none of btrfs's.
bool fs_sees(const std::string& probe, const std::string& fs, bool write, bool direct) {
  std::string mode = hook_mode(probe, fs);
  if (mode == "fentry" || mode == "kprobe") return true;
  if (mode != "tracepoint") return false;
  if (fs == "ext4") return direct ? hook_mode(probe, "iomap") == "tracepoint" : write;
  return fs == "xfs";
}

// Whether btrfs writes O_DIRECT through the page cache when it checksums the data (its default):
// since 6.15 (commit 968f19c5b1b7); before, its direct writes dirty no page.
bool btrfs_direct_writes_buffered() {
  struct utsname u {};
  int major = 0, minor = 0;
  if (uname(&u) || sscanf(u.release, "%d.%d", &major, &minor) != 2) {
    throw std::runtime_error("cannot read the kernel's version");
  }
  return major > 6 || (major == 6 && minor >= 15);
}

// The pages a write dirties: those its byte range touches, O_DIRECT writes none, except on
// btrfs where it writes them through the page cache.
int64_t pages_dirtied_by(const Shape& shape, const std::string& fs, bool write, int64_t start,
                         int64_t moved) {
  if (!write) return 0;
  if (shape.direct() && !(fs == "btrfs" && btrfs_direct_writes_buffered())) return 0;
  return pages_touched(start, moved);
}

// A write that fails for want of space may have dirtied the folio it got before it failed (ext4
// then drops it): counted dirtied, up to the largest folio the page cache makes (2 MiB).
constexpr int64_t kLargestFolioPages = 512;

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return text;
}

int64_t value_of(const std::string& out, const std::string& key) {
  auto at = out.find(key + "=");
  if (at == std::string::npos) throw std::runtime_error("shape_io did not print " + key + out);
  return std::stoll(out.substr(at + key.size() + 1));
}

void write_file(const std::string& path, int64_t bytes) {
  must_run({"dd", "if=/dev/zero", "of=" + path, "bs=" + std::to_string(bytes), "count=1",
            "conv=fsync", "status=none"});
}

// Fills the file system but for about `keep` of the bytes any writer may use (f_bavail: ext4's
// blocks reserved for root are left out too). btrfs refuses to allocate all it says is free: the
// filler shrinks until it fits.
void fill_disk(const LoopFs& fs, int64_t keep) {
  struct statvfs s {};
  if (statvfs(fs.mount_point().c_str(), &s)) throw std::runtime_error("statvfs failed");
  int64_t size = static_cast<int64_t>(s.f_bavail) * static_cast<int64_t>(s.f_frsize) - keep;
  auto filler = (fs / "filler").string();
  for (; size > 0; size -= 4 * MiB) {
    if (run({"fallocate", "-l", std::to_string(size), filler}).status == 0) break;
  }
  if (size <= 0) throw std::runtime_error("cannot fill " + fs.mount_point().string());
  must_run({"sync"});
}

class Exactness : public ::testing::TestWithParam<std::string> {
 protected:
  // Records `shape` on `file` (prepared beforehand) and checks every layer against the calls'
  // returns and the device's counters.
  void check(LoopFs& fs, const Shape& shape, bool write, const std::string& file) {
    fs.remount();  // nothing cached, nothing dirty from the rows before
    // What the mount itself dirtied (ext4's superblock, in the journal) goes out now, not by the
    // journal's timer while a row is recorded.
    must_run({"sync", "-f", fs.mount_point().string()});
    auto dir = fs.mount_point().parent_path() / "trace";
    std::vector<std::string> argv{EZIO_BIN,
                                  "record",
                                  "-f",
                                  "-o",
                                  dir.string(),
                                  "--",
                                  EZIO_SHAPE_IO,
                                  write ? "write" : "read",
                                  file,
                                  std::to_string(shape.offset),
                                  std::to_string(shape.len),
                                  std::to_string(shape.count)};
    argv.insert(argv.end(), shape.options.begin(), shape.options.end());
    int64_t device_before = quiet_device_stat_bytes(fs.device());
    std::string stat_before = slurp("/sys/block/" + fs.device() + "/stat");
    ezio::test::Run r = run(argv);
    int64_t device_delta = device_stat_bytes(fs.device()) - device_before;
    std::string stat_after = slurp("/sys/block/" + fs.device() + "/stat");
    ASSERT_EQ(r.status, 0) << r.err << r.out;
    int64_t start = value_of(r.out, "start"), moved = value_of(r.out, "moved");
    Figures f = figures_of(dir / "eziotrace.otf2", file, fs.device(), write);
    std::string mode = hook_mode(f.fs_probe, GetParam());
    SCOPED_TRACE(fmt_row(shape, mode, start, moved, f.fs_probe));
    if (std::string want = env_or_empty("EZIO_EXACTNESS_HOOKS"); !want.empty()) {
      EXPECT_EQ(mode, want) << "the file system's hooks (EZIO_EXACTNESS_HOOKS)";
      EXPECT_EQ(vfs_hook_mode(f.vfs_probe), want)
          << "the VFS layer's hooks (EZIO_EXACTNESS_HOOKS): " << f.vfs_probe;
    }

    if (shape.disk_full) {
      EXPECT_GT(moved, 0) << "the disk was too full: nothing written";
      EXPECT_LT(moved, shape.len * shape.count) << "the disk was not full enough";
    } else if (write) {
      EXPECT_EQ(moved, shape.len * shape.count);
    } else {
      EXPECT_EQ(moved, std::min(shape.len * shape.count, kReadFileSize - shape.offset));
    }
    if (shape.via()) {
      std::cout << shape.name << " on " << GetParam() << ": syscall " << f.file.syscall
                << " B, VFS " << f.file.vfs << " B on the file\n";
    } else {
      EXPECT_EQ(f.file.syscall, moved);
      EXPECT_EQ(f.file.vfs, moved);
    }
    if (shape.via()) {
      // The FS events are in the layer's totals, the only FS bytes of the direction; `files`
      // cannot put them on a file (the call names none) and says so.
      EXPECT_FALSE(f.file.fs.has_value()) << "`files` gave the FS " << *f.file.fs << " bytes";
      // A tracepoint-mode read has none: ext4 has no buffered-read event, xfs's splice_read has
      // its own (xfs_file_splice_read), not hooked.
      if (fs_sees(f.fs_probe, GetParam(), write, false) &&
          (write || hook_mode(f.fs_probe, GetParam()) != "tracepoint")) {
        EXPECT_EQ(f.fs_layer_bytes, moved) << "FS layer";
      } else {
        EXPECT_EQ(f.fs_layer_bytes, "not observed") << "FS layer";
      }
    } else if (fs_sees(f.fs_probe, GetParam(), write, shape.direct())) {
      ASSERT_TRUE(f.file.fs.has_value()) << "FS layer said not observed";
      EXPECT_EQ(*f.file.fs, moved);
      EXPECT_GE(f.file.fs_events, 1);
      EXPECT_FALSE(f.file.fs_row_not_observed);
    } else {
      EXPECT_FALSE(f.file.fs.has_value()) << "FS layer gave " << *f.file.fs << " bytes";
      EXPECT_TRUE(f.file.fs_row_not_observed) << "`layers` gave the FS a number";
    }
    int64_t dirtied = pages_dirtied_by(shape, GetParam(), write, start, moved);
    if (shape.disk_full) {
      std::cout << shape.name << " on " << GetParam() << ": " << f.pages_dirtied
                << " pages dirtied, " << dirtied << " written\n";
      ASSERT_TRUE(f.pages_dirtied.is_number()) << f.pages_dirtied;
      EXPECT_GE(f.pages_dirtied.get<int64_t>(), dirtied) << "pages dirtied";
      EXPECT_LE(f.pages_dirtied.get<int64_t>(), dirtied + kLargestFolioPages) << "pages dirtied";
    } else {
      EXPECT_EQ(f.pages_dirtied, dirtied) << "pages dirtied";
    }
    std::string device_note = std::string(write ? "device bytes" : "device bytes read") +
                              "; stat before the recording " + stat_before + ", after " +
                              stat_after;
    EXPECT_EQ(f.device_bytes, device_delta) << device_note;
  }

  std::string fmt_row(const Shape& s, const std::string& mode, int64_t start, int64_t moved,
                      const std::string& probe) {
    return std::string(s.name) + " on " + GetParam() + ", " + mode + " (" + probe +
           "): start=" + std::to_string(start) + " moved=" + std::to_string(moved);
  }
};

TEST_P(Exactness, Writes) {
  LoopFs fs(GetParam());
  int rows = 0;
  for (const Shape& shape : kWrites) {
    if (!row_selected(shape)) continue;
    ++rows;
    std::string file = (std::filesystem::canonical(fs.mount_point()) / shape.name).string();
    if (shape.existing) write_file(file, shape.existing);
    if (shape.disk_full) fill_disk(fs, 2 * MiB);
    check(fs, shape, true, file);
  }
  std::cout << rows << " write rows on " << GetParam() << "\n";
}

TEST_P(Exactness, Reads) {
  LoopFs fs(GetParam());
  std::string file = (std::filesystem::canonical(fs.mount_point()) / "data").string();
  write_file(file, kReadFileSize);
  int rows = 0;
  for (const Shape& shape : kReads) {
    if (!row_selected(shape)) continue;
    ++rows;
    check(fs, shape, false, file);
  }
  std::cout << rows << " read rows on " << GetParam() << "\n";
}

INSTANTIATE_TEST_SUITE_P(FileSystems, Exactness, ::testing::Values("ext4", "xfs", "btrfs"));

}  // namespace
}  // namespace ezio::test
