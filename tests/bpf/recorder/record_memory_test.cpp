// SPDX-License-Identifier: GPL-2.0-only
// The recorder's memory does not grow with the length of a recording: the peak resident memory of
// a long recording of the cheapest syscalls there are (1-byte dd, faster than the recorder can
// write them) against that of a short one, measured in the same test.
//
// How full the recorder's bounded queues (the record store, the archive writer's queue) get
// depends on how the two threads and dd share the cores, so either run's peak may sit anywhere
// between the empty and the full queues. The test therefore asserts a slope, not a ratio: the
// memory each extra call may add is far below what keeping any trace of each call would take (a
// decoded record, or even its OTF2 event), and the runs differ by enough calls that the queues'
// whole swing, spread over them, stays under it.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>

#include "run.h"

namespace fs = std::filesystem;

namespace {

struct Recorded {
  long max_rss_kb = 0;
  uint64_t recorded = 0;  // syscall events in the summary
  uint64_t seen = 0;      // those recorded plus those lost: what the kernel saw
};

// The syscalls the archive holds, as `eziotrace layers` counts them.
uint64_t syscalls_in_archive(const fs::path& out) {
  auto r = ezio::test::eziotrace({"layers", "--all", "--json", (out / "eziotrace.otf2").string()});
  EXPECT_EQ(r.status, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  for (const auto& l : j["layers"]) {
    if (l["layer"] == "Syscall") {
      return l["reads"].get<uint64_t>() + l["writes"].get<uint64_t>() + l["other"].get<uint64_t>();
    }
  }
  ADD_FAILURE() << "no Syscall row: " << r.out;
  return 0;
}

Recorded record_dd(const fs::path& out, uint64_t count) {
  auto r = ezio::test::eziotrace({"record", "-o", out.string(), "--", "dd", "if=/dev/zero",
                                  "of=/dev/null", "bs=1", "count=" + std::to_string(count),
                                  "status=none"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(fs::exists(out / "eziotrace.otf2")) << r.err;
  Recorded rec;
  rec.max_rss_kb = r.max_rss_kb;
  std::smatch m;
  // "  syscall   <events> <reads> <writes> <other> <bytes read> <bytes written> <lost>"
  if (std::regex_search(r.err, m, std::regex(R"(\n\s+syscall\s+(\d+)\s.*\s(\d+)\n)"))) {
    rec.recorded = std::stoull(m[1]);
    rec.seen = rec.recorded + std::stoull(m[2]);
  }
  return rec;
}

}  // namespace

TEST(RecordMemory, PeakStaysFlatAsTheRecordingGrowsEightfold) {
  auto dir = ezio::test::scratch_dir("memory");
  constexpr uint64_t kShort = 500'000, kLong = 4'000'000;  // dd's reads + writes: 1 M and 8 M
  Recorded short_run = record_dd(dir / "short", kShort);
  Recorded long_run = record_dd(dir / "long", kLong);
  ASSERT_GT(short_run.max_rss_kb, 0);
  // Both really saw their syscalls (dd also makes a few of its own at start).
  ASSERT_GE(short_run.seen, 2 * kShort);
  ASSERT_GE(long_run.seen, 2 * kLong);
  // A recorder behind 1-byte dd (it is on a small machine) holds records up to its bound, stops
  // draining and resumes: the archive still holds every call the summary counts.
  EXPECT_EQ(syscalls_in_archive(dir / "long"), long_run.recorded);
  // Bytes of peak memory per extra call; an OTF2 event alone takes more than this.
  constexpr double kMaxBytesPerCall = 12.0;
  double grown = 1024.0 * double(long_run.max_rss_kb - short_run.max_rss_kb);
  double per_call = grown / double(long_run.seen - short_run.seen);
  EXPECT_LE(per_call, kMaxBytesPerCall)
      << "peak RSS " << short_run.max_rss_kb << " KiB for " << short_run.seen << " syscalls, "
      << long_run.max_rss_kb << " KiB for " << long_run.seen;
}
