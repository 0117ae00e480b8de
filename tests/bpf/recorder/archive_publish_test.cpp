// SPDX-License-Identifier: GPL-2.0-only
// An archive is published only once it reads back: on a disk that fills up at any point of the
// recording or of the merge, eziotrace either leaves a complete, readable archive or exits 1 with
// a clear message and nothing at the output path, and the application's own run is unaffected.
#include <gtest/gtest.h>
#include <sys/mount.h>

#include <cstring>

#include "run.h"

namespace fs = std::filesystem;
using ezio::test::eziotrace;
using ezio::test::program;

namespace {

// A tmpfs of `kib` KiB at dir, unmounted on every path out of the test.
class Tmpfs {
 public:
  Tmpfs(fs::path dir, int kib) : dir_(std::move(dir)) {
    fs::create_directories(dir_);
    std::string opts = "size=" + std::to_string(kib) + "k";
    if (mount("tmpfs", dir_.c_str(), "tmpfs", 0, opts.c_str()) != 0) error_ = strerror(errno);
  }
  ~Tmpfs() {
    if (error_.empty()) umount2(dir_.c_str(), MNT_DETACH);
  }
  Tmpfs(const Tmpfs&) = delete;
  Tmpfs& operator=(const Tmpfs&) = delete;
  const std::string& error() const { return error_; }

 private:
  fs::path dir_;
  std::string error_;
};

// 16 KiB to 2 MiB: every 4 KiB up to 256 KiB (where the definitions and the anchor are written),
// then every 128 KiB.
std::vector<int> sweep_sizes(int step_small, int step_large) {
  std::vector<int> sizes;
  for (int k = 16; k < 256; k += step_small) sizes.push_back(k);
  for (int k = 256; k <= 2048; k += step_large) sizes.push_back(k);
  return sizes;
}

// On a tmpfs of each size, at <dir>/tiny: run(out) runs eziotrace with out as its output (and
// checks what it needs); each run gives either a readable archive at out, or rc 1 with a message
// naming the full disk and nothing at out (nor its staging directory). The sweep must cross the
// size an archive needs: some runs publish, some refuse.
template <typename Run>
void sweep(const fs::path& dir, const std::vector<int>& sizes, Run run) {
  int published = 0, refused = 0;
  for (int kib : sizes) {
    Tmpfs tiny(dir / "tiny", kib);
    ASSERT_EQ(tiny.error(), "");
    fs::path out = dir / "tiny" / "out", staging = dir / "tiny" / "out.incomplete";
    ezio::test::Run r = run(out);
    std::string at = std::to_string(kib) + " KiB: " + r.err;
    EXPECT_FALSE(fs::exists(staging)) << at;
    if (r.status == 0) {
      ++published;
      EXPECT_FALSE(ezio::test::dump_archive(out / "eziotrace.otf2").is_null()) << at;
      continue;
    }
    ++refused;
    EXPECT_EQ(r.status, 1) << at;
    EXPECT_NE(r.err.find("No space left on device"), std::string::npos) << at;
    EXPECT_FALSE(fs::exists(out)) << at;
  }
  EXPECT_GT(published, 0);
  EXPECT_GT(refused, 0);
}

}  // namespace

TEST(ArchivePublish, RecordOnAFillingDiskGivesAWholeArchiveOrNone) {
  auto dir = ezio::test::scratch_dir("publish-record");
  fs::path app_out = dir / "services";
  sweep(dir, sweep_sizes(4, 128), [&](const fs::path& out) {
    fs::remove(app_out);
    auto r = eziotrace({"record", "-o", out.string(), "--", "sh", "-c",
                        "cat /etc/services > " + app_out.string() + "; ls /usr/bin >/dev/null"});
    if (r.status == 1) {
      EXPECT_NE(r.err.find("the application ended: exit status 0"), std::string::npos) << r.err;
    }
    EXPECT_EQ(ezio::test::read_text(app_out), ezio::test::read_text("/etc/services")) << r.err;
    return r;
  });
}

TEST(ArchivePublish, MergedRunOnAFillingDiskGivesAWholeArchiveOrNone) {
  auto dir = ezio::test::scratch_dir("publish-run");
  fs::path app_out = dir / "services";
  sweep(dir, sweep_sizes(16, 256), [&](const fs::path& out) {
    fs::remove(app_out);
    auto r = eziotrace({"run", "-o", out.string(), "--", "cp", "/etc/services", app_out.string()});
    EXPECT_FALSE(fs::exists(dir / "tiny" / "out.parts")) << r.err;
    EXPECT_EQ(ezio::test::read_text(app_out), ezio::test::read_text("/etc/services")) << r.err;
    return r;
  });
}

TEST(ArchivePublish, MergeOnAFillingDiskGivesAWholeArchiveOrNone) {
  auto dir = ezio::test::scratch_dir("publish-merge");
  fs::path ez = dir / "ez", kernel = dir / "kernel";
  fs::create_directories(ez);
  auto rec = ezio::test::run({EZIO_BINARY, "record", "-o", kernel.string(), "--", "eztrace", "-t",
                              "posixio", "cp", "/etc/services", (dir / "copy").string()},
                             {"EZTRACE_TRACE_DIR=" + ez.string()});
  ASSERT_EQ(rec.status, 0) << rec.err;
  sweep(dir, sweep_sizes(4, 128), [&](const fs::path& out) {
    return eziotrace({"merge", (ez / "cp_trace").string(), kernel.string(), "-o", out.string()});
  });
}

// A location of ~6 MiB, written in several of OTF2's buffer flushes: the disk fills up in the
// middle of a location's events (not only when they are written out at its end), and the merge
// must stop there with the full disk named rather than keep feeding OTF2 (which aborted).
TEST(ArchivePublish, MergeOfALongLocationOnAFillingDiskGivesAWholeArchiveOrNone) {
  auto dir = ezio::test::scratch_dir("publish-merge-long");
  fs::path ez = dir / "ez", kernel = dir / "kernel";
  fs::create_directories(ez);
  auto rec = ezio::test::run(
      {EZIO_BINARY, "record", "-o", kernel.string(), "--", "eztrace", "-t", "posixio", "dd",
       "if=/dev/zero", "of=" + (dir / "data").string(), "bs=1", "count=15000"},
      {"EZTRACE_TRACE_DIR=" + ez.string()});
  ASSERT_EQ(rec.status, 0) << rec.err;
  // The merged archive is ~6 MiB, its temporary files a little less: from 4 MiB the disk fills
  // up in the temporary files, in the middle of dd's location, at its end, then not at all.
  std::vector<int> sizes;
  for (int mib = 4; mib <= 14; mib += 2) sizes.push_back(mib * 1024);
  sweep(dir, sizes, [&](const fs::path& out) {
    return eziotrace({"merge", (ez / "dd_trace").string(), kernel.string(), "-o", out.string()});
  });
}
