// SPDX-License-Identifier: GPL-2.0-only
// The archive written on a thread of its own (ArchivePipeline): batches written in the order they
// were taken, none twice; a writer a queue behind takes nothing more from the store, which fills
// and stops the drain (the rings then lose, counted); the writer's error reaches the drain thread.
#include "recorder/archive/archive_pipeline.h"

#include <gtest/gtest.h>
#include <sys/syscall.h>

#include <atomic>
#include <future>
#include <vector>

#include "recorder/archive/kernel_archive.h"
#include "run.h"

using namespace ezio::recorder;
using namespace std::chrono_literals;

namespace {

constexpr uint32_t kPid = 2000;

ezio_syscall_rec write_call(uint64_t id) {
  ezio_syscall_rec r{};
  r.h = {EZIO_RECORD_VERSION, EZIO_REC_SYSCALL, EZIO_LAYER_SYSCALL, sizeof(r), kPid, kPid};
  r.call_id = id;
  r.t_enter = 10 * id;
  r.t_exit = 10 * id + 5;
  r.fd = 3;
  r.count = 1;
  r.ret = 1;
  r.offset = -1;
  r.nr = SYS_write;
  return r;
}

void add_calls(RecordStore& s, uint64_t first, uint64_t n) {
  for (uint64_t id = first; id < first + n; ++id) {
    auto r = write_call(id);
    s.add(&r, sizeof(r));
  }
}

// A writer that records the call ids it is given, held at its first batch until released.
struct HeldWriter {
  std::promise<void> entered, release;
  std::shared_future<void> released = release.get_future().share();
  std::vector<uint64_t> ids;
  bool first = true;
  ArchivePipeline::Write fn() {
    return [this](ArchiveBatch&& b) {
      if (first) {
        first = false;
        entered.set_value();
        released.wait();
      }
      for (const auto& c : b.records.syscalls) ids.push_back(c.call_id);
    };
  }
};

}  // namespace

TEST(ArchivePipeline, AWriterAQueueBehindTakesNothingMoreAndTheStoreFills) {
  RecordStore s;
  s.limit(8);
  HeldWriter w;
  ArchivePipeline p(w.fn(), 4);
  add_calls(s, 1, 5);
  ASSERT_TRUE(p.offer(s, UINT64_MAX));
  w.entered.get_future().wait();  // the writer holds the first batch
  add_calls(s, 6, 5);
  EXPECT_TRUE(p.offer(s, UINT64_MAX));  // the queue is empty: taken
  EXPECT_EQ(s.held(), 0u);
  add_calls(s, 11, 8);
  EXPECT_FALSE(p.offer(s, UINT64_MAX));  // a queue behind: nothing taken
  EXPECT_EQ(s.held(), 8u);
  // A full store stops the drain (RingReader, RingGroup): the rest waits in the rings, which fill
  // and make the kernel count what they cannot take.
  EXPECT_TRUE(s.full());
  EXPECT_EQ(p.times_full(), 1u);
  w.release.set_value();
  p.wait_for_room(60s);
  EXPECT_TRUE(p.offer(s, UINT64_MAX));
  p.flush();
  ASSERT_EQ(w.ids.size(), 18u);
  for (uint64_t i = 0; i < w.ids.size(); ++i) EXPECT_EQ(w.ids[i], i + 1);
}

TEST(ArchivePipeline, PushWaitsForRoomAndBatchesAreWrittenInOrder) {
  RecordStore s;
  std::vector<uint64_t> ids;
  ArchivePipeline p(
      [&](ArchiveBatch&& b) {
        for (const auto& c : b.records.syscalls) ids.push_back(c.call_id);
      },
      3);
  for (uint64_t k = 0; k < 200; ++k) {
    add_calls(s, 1 + 5 * k, 5);
    p.push(s, UINT64_MAX);
  }
  p.flush();
  ASSERT_EQ(ids.size(), 1000u);
  for (uint64_t i = 0; i < ids.size(); ++i) ASSERT_EQ(ids[i], i + 1) << i;
}

TEST(ArchivePipeline, TheWritersErrorReachesTheDrainThreadAndNothingAfterIsWritten) {
  RecordStore s;
  std::atomic<int> written = 0;
  ArchivePipeline p(
      [&](ArchiveBatch&&) {
        ++written;
        ezio::fail("cannot write the archive: No space left on device");
      },
      1);
  add_calls(s, 1, 2);
  ASSERT_TRUE(p.offer(s, UINT64_MAX));
  for (int i = 0; i < 600 && !p.failure(); ++i) p.wait_for_room(100ms);
  ASSERT_TRUE(p.failure());
  EXPECT_NE(std::string(p.failure()->what()).find("No space left"), std::string::npos);
  add_calls(s, 3, 2);
  EXPECT_FALSE(p.offer(s, UINT64_MAX));  // nothing taken after the error
  EXPECT_EQ(s.held(), 2u);
  EXPECT_THROW(p.push(s, UINT64_MAX), ezio::Error);
  EXPECT_THROW(p.flush(), ezio::Error);
  EXPECT_EQ(written, 1);
}

// The archive written by the pipeline's thread, then finished by the caller's: every call once,
// in order, readable.
TEST(ArchivePipeline, TheKernelArchiveWrittenOnTheWritersThreadIsWhole) {
  RecordStore s;
  auto dir = ezio::test::scratch_dir("archive_pipeline");
  RecordingInfo info;
  info.root_pid = kPid;
  info.command = {"/bin/app"};
  info.cwd = "/";
  info.start_monotonic_ns = 1;
  info.end_monotonic_ns = 1'000'000;
  KernelArchive archive(dir, info);
  ArchivePipeline p(
      [&](ArchiveBatch&& b) { archive.write_batch(std::move(b)); }, 64,
      [&](ArchiveBatch& b) { archive.index(b); });  // indexed on this thread, as the recorder does
  constexpr uint64_t kBatches = 50, kPerBatch = 100;
  for (uint64_t k = 0; k < kBatches; ++k) {
    add_calls(s, 1 + kPerBatch * k, kPerBatch);
    p.push(s, 10 * kPerBatch * (k + 1));
  }
  p.flush();
  ArchiveSummary sum = archive.finish(s);
  EXPECT_EQ(sum.layers[EZIO_LAYER_SYSCALL].events, kBatches * kPerBatch);
  auto j = ezio::test::dump_archive(dir / "eziotrace.otf2");
  ASSERT_FALSE(j.is_null());
  auto& calls = j["locations"][std::to_string(kPid)]["calls"];
  ASSERT_EQ(calls.size(), kBatches * kPerBatch);
  for (uint64_t i = 0; i < calls.size(); ++i) ASSERT_EQ(calls[i]["call.id"], i + 1) << i;
}
