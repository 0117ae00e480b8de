// SPDX-License-Identifier: GPL-2.0-only
// Exactness of every layer, one row per I/O shape (shapes.cpp) × file system × hook mode: the
// rows recorded on a private loop device, each row's figures compared with what its calls
// returned, each recording's with the device's own counters (docs/kernel-layers.md, "What each
// layer observes").
//
// For each row: the syscall, VFS and FS layers moved the bytes the calls returned, on the row's
// own file (FS: "not observed" where the hook mode has no FS event for the shape, never a number;
// for sendfile and splice, which name no file, the FS layer's total and "not observed" on the
// file). For each recording: the FS layer's total in each direction is the bytes of the rows it
// can see, "not observed" when it can see none; the page cache dirtied the pages the written
// ranges touch (none for O_DIRECT but on btrfs since 6.15, none for reads; a write cut short by a
// full disk up to a folio more); the block requests on the device (attributed to the target, or
// not) add up to the sectors /sys/block/<dev>/stat counted while the recording ran.
//
// The rows of a file system and hook mode go into three recordings, each after a remount
// (nothing cached, nothing dirty): the plain calls, sendfile and splice (their FS bytes are on no
// file, so every file's FS cells say "not observed" where they are), and the write on a nearly
// full disk. One file system serves every hook mode: the read rows' files are written once.
//
// Two settings from the environment, for the qemu guest's run (tests/qemu/guest-exactness.sh):
// EZIO_EXACTNESS_ROWS, a comma-separated list of row names, records only those rows;
// EZIO_EXACTNESS_HOOKS, a comma-separated list of hook modes (fentry, kprobe, tracepoint), records
// the rows once per mode, the hooks before it denied (EZIOTRACE_DENY_HOOKS), and fails every row
// not recorded with that hook kind, so that a silent fallback cannot pass. Without it, the rows
// are recorded once, with the hooks this kernel gives.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "figures.h"
#include "loop_fs.h"
#include "run.h"
#include "shapes.h"

namespace ezio::test {
namespace {

// One row of a recording: its shape, direction and file, and what shape_io printed.
struct Row {
  const Shape* shape;
  bool write;
  std::string file;
  int64_t start = 0, moved = 0;
};

std::string env_or_empty(const char* name) {
  const char* v = getenv(name);
  return v ? v : "";
}

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> parts;
  std::stringstream in(list);
  for (std::string part; std::getline(in, part, ',');) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

// Whether EZIO_EXACTNESS_ROWS (empty: every row) selects the row.
bool row_selected(const Shape& shape) {
  std::string rows = env_or_empty("EZIO_EXACTNESS_ROWS");
  if (rows.empty()) return true;
  return ("," + rows + ",").find("," + std::string(shape.name) + ",") != std::string::npos;
}

// The hook modes to record with: EZIO_EXACTNESS_HOOKS's, or "" (this kernel's own choice).
std::vector<std::string> hook_modes() {
  auto modes = split(env_or_empty("EZIO_EXACTNESS_HOOKS"));
  return modes.empty() ? std::vector<std::string>{""} : modes;
}

// The recorder's environment for a hook mode: the hook kinds it prefers to that one denied.
std::vector<std::string> env_for(const std::string& mode) {
  if (mode == "kprobe") return {"EZIOTRACE_DENY_HOOKS=fentry"};
  if (mode == "tracepoint") return {"EZIOTRACE_DENY_HOOKS=fentry,kprobe"};
  if (mode == "fentry" || mode.empty()) return {};
  throw std::runtime_error("EZIO_EXACTNESS_HOOKS: unknown hook mode " + mode);
}

// A write cut short by a full disk may have dirtied the folio it got before it failed (ext4
// then drops it): counted dirtied, up to the largest folio the page cache makes (2 MiB).
constexpr int64_t kLargestFolioPages = 512;

void write_file(const std::string& path, int64_t bytes) {
  must_run({"dd", "if=/dev/zero", "of=" + path, "bs=" + std::to_string(bytes), "count=1",
            "conv=fsync", "status=none"});
}

// Fills the file system but for about `keep` of the bytes any writer may use (f_bavail: ext4's
// blocks reserved for root are left out too). btrfs refuses to allocate all it says is free: the
// filler shrinks until it fits.
void fill_disk(const LoopFs& fs, const std::string& filler, int64_t keep) {
  struct statvfs s {};
  if (statvfs(fs.mount_point().c_str(), &s)) throw std::runtime_error("statvfs failed");
  int64_t size = static_cast<int64_t>(s.f_bavail) * static_cast<int64_t>(s.f_frsize) - keep;
  for (; size > 0; size -= 4 * MiB) {
    if (run({"fallocate", "-l", std::to_string(size), filler}).status == 0) break;
  }
  if (size <= 0) throw std::runtime_error("cannot fill " + fs.mount_point().string());
  must_run({"sync"});
}

// shape_io's command line for a row, as one shell word each (no file name has a quote).
std::string shape_io_command(const Row& row) {
  const Shape& s = *row.shape;
  std::string cmd = std::string("'") + EZIO_SHAPE_IO + "' " + (row.write ? "write" : "read") +
                    " '" + row.file + "' " + std::to_string(s.offset) + " " +
                    std::to_string(s.len) + " " + std::to_string(s.count);
  for (const auto& o : s.options) cmd += " " + o;
  return cmd;
}

// The `start=… moved=…` lines shape_io printed, one per row, in the rows' order.
void read_returns(const std::string& out, std::vector<Row>& rows) {
  std::stringstream in(out);
  size_t i = 0;
  for (std::string line; std::getline(in, line);) {
    long long start = 0, moved = 0;
    if (sscanf(line.c_str(), "start=%lld moved=%lld", &start, &moved) != 2) continue;
    if (i == rows.size()) throw std::runtime_error("more shape_io lines than rows: " + out);
    rows[i].start = start;
    rows[i++].moved = moved;
  }
  if (i != rows.size()) throw std::runtime_error("shape_io printed fewer lines than rows: " + out);
}

class Exactness : public ::testing::TestWithParam<std::string> {
 protected:
  // Records `rows` in one run of the recorder with hook mode `mode` and checks every layer
  // against the calls' returns and the device's counters.
  void record(LoopFs& fs, std::vector<Row>& rows, const std::string& mode) {
    SCOPED_TRACE("the recording of " + std::to_string(rows.size()) + " rows from " +
                 rows.front().shape->name);
    fs.remount();  // nothing cached, nothing dirty from the recordings before
    // What the mount itself dirtied (ext4's superblock, in the journal) goes out now, not by the
    // journal's timer while the rows are recorded.
    must_run({"sync", "-f", fs.mount_point().string()});
    auto dir = fs.mount_point().parent_path() / "trace";
    std::string script = "set -e";
    for (const Row& row : rows) script += "; " + shape_io_command(row);
    // What the file system writes on its own after the last call (xfs's log and metadata
    // writeback, btrfs's) is written while the recording still runs: the script ends once the
    // device has been idle for a second.
    std::string stat = "/sys/block/" + fs.device() + "/stat";
    script += "; p=; while [ \"$(cat " + stat + ")\" != \"$p\" ]; do p=$(cat " + stat +
              "); sleep 1; done";
    int64_t device_before = quiet_device_stat_bytes(fs.device());
    std::string stat_before = read_text("/sys/block/" + fs.device() + "/stat");
    ezio::test::Run r =
        run({EZIO_BIN, "record", "-f", "-o", dir.string(), "--", "/bin/sh", "-c", script},
            env_for(mode));
    int64_t device_delta = device_stat_bytes(fs.device()) - device_before;
    std::string stat_after = read_text("/sys/block/" + fs.device() + "/stat");
    ASSERT_EQ(r.status, 0) << r.err << r.out;
    read_returns(r.out, rows);
    Recording rec = analyze(dir / "eziotrace.otf2", fs.device());
    std::string fs_mode = hook_mode(rec.fs_probe, GetParam());
    SCOPED_TRACE("on " + GetParam() + ", " + fs_mode + " (" + rec.fs_probe + ")");
    if (!mode.empty()) {
      EXPECT_EQ(fs_mode, mode) << "the file system's hooks (EZIO_EXACTNESS_HOOKS)";
      EXPECT_EQ(vfs_hook_mode(rec.vfs_probe), mode)
          << "the VFS layer's hooks (EZIO_EXACTNESS_HOOKS): " << rec.vfs_probe;
    }
    int64_t dirtied = 0, fs_bytes[2] = {0, 0};
    bool fs_seen[2] = {false, false}, has_rows[2] = {false, false}, disk_full = false;
    for (const Row& row : rows) {
      has_rows[row.write] = true;
      check_row(rec, row);
      dirtied += pages_dirtied_by(*row.shape, GetParam(), row.write, row.start, row.moved);
      disk_full |= row.shape->disk_full;
      if (fs_sees_row(rec, row)) {
        fs_seen[row.write] = true;
        fs_bytes[row.write] += row.moved;
      }
    }
    // A direction without rows: 0 where the hooks see all of it, "not observed" where not.
    for (bool write : {false, true}) {
      if (!has_rows[write]) continue;
      if (fs_seen[write]) {
        EXPECT_EQ(rec.fs_layer_bytes(write), fs_bytes[write]) << "FS layer, write " << write;
      } else {
        EXPECT_EQ(rec.fs_layer_bytes(write), "not observed") << "FS layer, write " << write;
      }
    }
    if (disk_full) {
      std::cout << "disk full on " << GetParam() << " " << mode << ": " << rec.pages_dirtied()
                << " pages dirtied, " << dirtied << " written\n";
      ASSERT_TRUE(rec.pages_dirtied().is_number()) << rec.pages_dirtied();
      EXPECT_GE(rec.pages_dirtied().get<int64_t>(), dirtied) << "pages dirtied";
      EXPECT_LE(rec.pages_dirtied().get<int64_t>(), dirtied + kLargestFolioPages);
    } else {
      EXPECT_EQ(rec.pages_dirtied(), dirtied) << "pages dirtied";
    }
    // The oracle is the device's own counter over the recording's window, as the recorder read
    // it when its session began and ended: what the file system's own threads write after that
    // (btrfs's transaction commit, xfs's log) and before this test reads the counter again is
    // in neither. The window must lie within the test's own reads.
    ASSERT_TRUE(rec.window_start && rec.window_end)
        << "the archive has no EZIOTRACE::DEVICE_BYTES_AT_START/_AT_END on block " << fs.device();
    EXPECT_EQ(rec.device_bytes, *rec.window_end - *rec.window_start)
        << "device bytes over the recording's window; the test's stat before the recording "
        << stat_before << ", after " << stat_after;
    EXPECT_GE(*rec.window_start, device_before) << "the window began before the test's read";
    EXPECT_LE(*rec.window_end, device_before + device_delta)
        << "the window ended after the test's read";
  }

  // Whether the FS layer's total holds the row's bytes: for sendfile and splice, the writes
  // where their file system's hooks see its writes, the reads with the exact hooks, and xfs's
  // before 6.5 (ext4 has no buffered-read tracepoint, xfs's splice_read since 6.5 is its own, not
  // hooked).
  bool fs_sees_row(const Recording& rec, const Row& row) {
    if (!row.shape->via()) return fs_sees(rec.fs_probe, GetParam(), row.write, row.shape->direct());
    return fs_sees(rec.fs_probe, GetParam(), row.write, false) &&
           (row.write || hook_mode(rec.fs_probe, GetParam()) != "tracepoint" ||
            (GetParam() == "xfs" && xfs_splice_read_hooked()));
  }

  void check_row(const Recording& rec, const Row& row) {
    const Shape& shape = *row.shape;
    SCOPED_TRACE(std::string(shape.name) + ": start=" + std::to_string(row.start) +
                 " moved=" + std::to_string(row.moved));
    if (shape.disk_full) {
      EXPECT_GT(row.moved, 0) << "the disk was too full: nothing written";
      EXPECT_LT(row.moved, shape.len * shape.count) << "the disk was not full enough";
    } else if (row.write) {
      EXPECT_EQ(row.moved, shape.len * shape.count);
    } else {
      EXPECT_EQ(row.moved, std::min(shape.len * shape.count, kReadFileSize - shape.offset));
    }
    LayerBytes f = rec.file(row.file, row.write);
    if (shape.via()) {
      std::cout << shape.name << " on " << GetParam() << ": syscall " << f.syscall << " B, VFS "
                << f.vfs << " B on the file\n";
      // The FS events are in the layer's totals; `files` cannot put them on a file (the call
      // names none) and says so.
      EXPECT_FALSE(f.fs.has_value()) << "`files` gave the FS " << *f.fs << " bytes";
      return;
    }
    EXPECT_EQ(f.syscall, row.moved);
    EXPECT_EQ(f.vfs, row.moved);
    if (fs_sees_row(rec, row)) {
      ASSERT_TRUE(f.fs.has_value()) << "FS layer said not observed";
      EXPECT_EQ(*f.fs, row.moved);
      EXPECT_GE(f.fs_events, 1);
    } else {
      EXPECT_FALSE(f.fs.has_value()) << "FS layer gave " << *f.fs << " bytes";
    }
  }
};

TEST_P(Exactness, Rows) {
  LoopFs fs(GetParam());
  auto mnt = std::filesystem::canonical(fs.mount_point());
  // The read rows' files, each its own (a file read by one row is cached for the next), written
  // once: every recording's remount makes them cold again.
  std::vector<Row> reads;
  for (const Shape& shape : kReads) {
    if (!row_selected(shape)) continue;
    reads.push_back({&shape, false, (mnt / shape.name).string()});
    write_file(reads.back().file, kReadFileSize);
  }
  for (const std::string& mode : hook_modes()) {
    SCOPED_TRACE("hook mode " + (mode.empty() ? "of this kernel" : mode));
    std::vector<Row> plain, via, full;
    for (const Shape& shape : kWrites) {
      if (!row_selected(shape)) continue;
      Row row{&shape, true, (mnt / ("w-" + mode + "-" + shape.name)).string()};
      if (shape.existing) write_file(row.file, shape.existing);
      (shape.disk_full ? full : shape.via() ? via : plain).push_back(row);
    }
    for (const Row& row : reads) (row.shape->via() ? via : plain).push_back(row);
    for (auto* batch : {&plain, &via}) {
      if (!batch->empty()) record(fs, *batch, mode);
    }
    auto filler = (mnt / "filler").string();
    if (!full.empty()) {
      fill_disk(fs, filler, 2 * MiB);
      record(fs, full, mode);
    }
    // Room again for the next mode's writes.
    std::filesystem::remove(filler);
    for (const auto& batch : {plain, via, full}) {
      for (const Row& row : batch) {
        if (row.write) std::filesystem::remove(row.file);
      }
    }
    must_run({"sync", "-f", mnt.string()});
    size_t writes = std::count_if(plain.begin(), plain.end(), [](auto& r) { return r.write; }) +
                    std::count_if(via.begin(), via.end(), [](auto& r) { return r.write; }) +
                    full.size();
    std::cout << writes << " write rows, " << reads.size() << " read rows on " << GetParam()
              << " with " << (mode.empty() ? "this kernel's hooks" : mode) << "\n";
  }
}

INSTANTIATE_TEST_SUITE_P(FileSystems, Exactness, ::testing::Values("ext4", "xfs", "btrfs"));

}  // namespace
}  // namespace ezio::test
