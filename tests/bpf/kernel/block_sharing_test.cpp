// SPDX-License-Identifier: GPL-2.0-only
// A block request carrying the bios of two processes: the flusher writes back a bystander's small
// files and the target's one file in one plug, and neighbouring blocks merge into one request.
// The target is charged the bytes of its own bios; the bystander's are a count (the request's
// block.shared_bytes and the device's unattributed bytes), never attributed, never named.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <iostream>
#include <stdexcept>
#include <string>
#include <thread>

#include "kernel_trace.h"
#include "loop_fs.h"

namespace ezio::test {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr int kBystanderFiles = 3000;
constexpr long kPage = 4096;
// Each attempt has a fresh file system; the allocator or the plug may still put the target's
// blocks in a request of their own (then nothing is shared and the attempt says so).
constexpr int kAttempts = 3;

// The bystander: this test process, which is not recorded, writes n files of one page each.
void write_files(const fs::path& dir, int n) {
  std::string page(kPage, 'b');
  for (int i = 0; i < n; ++i) {
    auto path = (dir / ("b" + std::to_string(i))).string();
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || write(fd, page.data(), page.size()) != ssize_t(page.size())) {
      throw std::runtime_error("bystander cannot write " + path);
    }
    close(fd);
  }
}

void touch(const fs::path& path) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT, 0644);
  if (fd < 0) throw std::runtime_error("cannot create " + path.string());
  close(fd);
}

enum class Order { BystanderFirst, TargetFirst };

// The target writes one page into dir/target and, once the bystander's pages are dirty beside it,
// calls sync(): their writeback goes out in the order they were dirtied.
Recording run_scenario(const LoopFs& lfs, Order order) {
  fs::path dir = lfs / "d";
  fs::create_directory(dir);
  fs::path target = dir / "target";
  fs::path go = lfs.mount_point().parent_path() / "go";  // not on the loop device
  fs::remove(go);
  std::vector<std::string> args{"write-wait-sync", target.string(), std::to_string(kPage),
                                go.string()};
  if (order == Order::BystanderFirst) {
    write_files(dir, kBystanderFiles);
    touch(go);
    return record(lfs, args);
  }
  std::atomic<bool> stop = false;
  std::string failed;
  std::thread bystander([&] {
    try {
      std::error_code ec;
      while (!stop && fs::file_size(target, ec) != uint64_t(kPage)) usleep(1000);
      if (!stop) write_files(dir, kBystanderFiles);
    } catch (const std::exception& e) {
      failed = e.what();
    }
    touch(go);  // lets the target go on whatever happened
  });
  Recording r;
  try {
    r = record(lfs, args);
  } catch (...) {
    stop = true;
    bystander.join();
    throw;
  }
  bystander.join();
  if (!failed.empty()) throw std::runtime_error(failed);
  return r;
}

// Checks what holds on every attempt and returns the bytes the target's requests shared.
long check_charges(const LoopFs& lfs, const Recording& r) {
  long charged = 0, shared = 0, requests = 0;
  for (const auto& b : r.trace["block"]) {
    EXPECT_EQ(b["pid"], r.tid) << "a request charged to another process: " << b.dump();
    EXPECT_EQ(b["tid"], r.tid) << b.dump();
    if (b["device"] != lfs.device() || b["op"] != "write") continue;
    ++requests;
    charged += b["bytes"].get<long>();
    shared += b["shared_bytes"].get<long>();
    EXPECT_EQ(b["cause"], "writeback") << b.dump();
  }
  long dirtied = pagecache_of(r)["pagecache.dirtied"].get<long>() * kPage;
  long unattributed = r.trace["unattributed_bytes"].value("block " + lfs.device(), 0L);
  std::cout << "target: " << requests << " write request(s), " << charged << " bytes charged, "
            << shared << " shared; " << dirtied << " bytes dirtied; device unattributed "
            << unattributed << " bytes\n";
  EXPECT_EQ(charged, kPage) << r.trace["block"].dump(1);
  EXPECT_LE(charged, dirtied);
  // The bystander's part of the shared request is in the device's count of no one's bytes.
  EXPECT_GE(unattributed, shared);
  // Its files are not named anywhere: the target only ever opened its own.
  for (const auto& f : r.trace["files"]) {
    EXPECT_EQ(f.get<std::string>().find("/d/b"), std::string::npos) << f;
  }
  return shared;
}

void expect_shared_request_charged_by_parts(Order order) {
  for (int attempt = 1; attempt <= kAttempts; ++attempt) {
    LoopFs lfs("ext4-nojournal");
    Recording r = run_scenario(lfs, order);
    if (check_charges(lfs, r) > 0 || ::testing::Test::HasFailure()) return;
    std::cout << "attempt " << attempt << ": the target's page went out in a request alone\n";
  }
  FAIL() << "the scenario did not reproduce: in " << kAttempts
         << " attempts the target's page never shared a request with the bystander's";
}

// The case: the target's page is written back first, and the bystander's pages merge
// behind it into the request the target's bio created.
TEST(BlockSharing, BystanderMergedBehindTheTargetIsNotCharged) {
  expect_shared_request_charged_by_parts(Order::TargetFirst);
}

// The other way round: the target's page merges into a request the bystander's bio created.
TEST(BlockSharing, TargetMergedIntoABystanderRequestIsCharged) {
  expect_shared_request_charged_by_parts(Order::BystanderFirst);
}

}  // namespace
}  // namespace ezio::test
