// An archive is published only once it reads back: on a disk that fills up at any point of the
// recording or of the merge, eziotrace either leaves a complete, readable archive or exits 1 with
// a clear message and nothing at the output path, and the application's own run is unaffected.
#include <gtest/gtest.h>
#include <sys/mount.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "run.h"

namespace fs = std::filesystem;
using ezio::test::eziotrace;
using ezio::test::program;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

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

struct Outcome {
  int published = 0, refused = 0;
};

// One run on a tmpfs of that size: either a readable archive at out, or rc 1 with a message naming
// the full disk and nothing at out (nor its staging directory).
void expect_whole_or_nothing(const ezio::test::Run& r, const fs::path& out, int kib, Outcome& o) {
  fs::path staging = out;
  staging += ".incomplete";
  EXPECT_FALSE(fs::exists(staging)) << kib << " KiB";
  if (r.status == 0) {
    ++o.published;
    EXPECT_FALSE(ezio::test::dump_archive(out / "eziotrace.otf2").is_null()) << kib << " KiB";
    return;
  }
  ++o.refused;
  EXPECT_EQ(r.status, 1) << kib << " KiB: " << r.err;
  EXPECT_NE(r.err.find("No space left on device"), std::string::npos) << kib << " KiB: " << r.err;
  EXPECT_FALSE(fs::exists(out)) << kib << " KiB";
}

}  // namespace

TEST(ArchivePublish, RecordOnAFillingDiskGivesAWholeArchiveOrNone) {
  auto dir = ezio::test::scratch_dir("publish-record");
  fs::path app_out = dir / "services";
  Outcome o;
  for (int kib : sweep_sizes(4, 128)) {
    Tmpfs tiny(dir / "tiny", kib);
    ASSERT_EQ(tiny.error(), "");
    fs::path out = dir / "tiny" / "out";
    fs::remove(app_out);
    auto r = eziotrace({"record", "-o", out.string(), "--", "sh", "-c",
                        "cat /etc/services > " + app_out.string() + "; ls /usr/bin >/dev/null"});
    expect_whole_or_nothing(r, out, kib, o);
    if (r.status == 1) {
      EXPECT_NE(r.err.find("the application ended: exit status 0"), std::string::npos) << r.err;
    }
    EXPECT_EQ(slurp(app_out), slurp("/etc/services")) << kib << " KiB";
  }
  // The sweep crosses the size an archive needs.
  EXPECT_GT(o.published, 0);
  EXPECT_GT(o.refused, 0);
}

TEST(ArchivePublish, MergedRunOnAFillingDiskGivesAWholeArchiveOrNone) {
  auto dir = ezio::test::scratch_dir("publish-run");
  fs::path app_out = dir / "services";
  Outcome o;
  for (int kib : sweep_sizes(16, 256)) {
    Tmpfs tiny(dir / "tiny", kib);
    ASSERT_EQ(tiny.error(), "");
    fs::path out = dir / "tiny" / "out";
    fs::remove(app_out);
    auto r = eziotrace({"run", "-o", out.string(), "--", "cp", "/etc/services", app_out.string()});
    expect_whole_or_nothing(r, out, kib, o);
    EXPECT_FALSE(fs::exists(dir / "tiny" / "out.parts")) << kib << " KiB";
    EXPECT_EQ(slurp(app_out), slurp("/etc/services")) << kib << " KiB";
  }
  EXPECT_GT(o.published, 0);
  EXPECT_GT(o.refused, 0);
}

TEST(ArchivePublish, MergeOnAFillingDiskGivesAWholeArchiveOrNone) {
  auto dir = ezio::test::scratch_dir("publish-merge");
  fs::path ez = dir / "ez", kernel = dir / "kernel";
  fs::create_directories(ez);
  auto rec = ezio::test::run({EZIO_BINARY, "record", "-o", kernel.string(), "--", "eztrace", "-t",
                              "posixio", "cp", "/etc/services", (dir / "copy").string()},
                             {"EZTRACE_TRACE_DIR=" + ez.string()});
  ASSERT_EQ(rec.status, 0) << rec.err;
  Outcome o;
  for (int kib : sweep_sizes(4, 128)) {
    Tmpfs tiny(dir / "tiny", kib);
    ASSERT_EQ(tiny.error(), "");
    fs::path out = dir / "tiny" / "out";
    auto r = eziotrace({"merge", (ez / "cp_trace").string(), kernel.string(), "-o", out.string()});
    expect_whole_or_nothing(r, out, kib, o);
  }
  EXPECT_GT(o.published, 0);
  EXPECT_GT(o.refused, 0);
}
