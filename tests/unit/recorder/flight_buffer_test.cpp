// SPDX-License-Identifier: GPL-2.0-only
// The flight recorder's overwrite buffer (recorder/service/flight_buffer.h) on synthetic records:
// what a window holds, what goes by age and by memory, and what is kept besides the events.
#include "recorder/service/flight_buffer.h"

#include <gtest/gtest.h>

#include <cstring>
#include <set>

#include "record.h"

namespace {

using ezio::recorder::service::FlightBuffer;

ezio_syscall_rec call(uint32_t pid, uint64_t t_enter, uint64_t t_exit) {
  ezio_syscall_rec r{};
  r.h = {EZIO_RECORD_VERSION, EZIO_REC_SYSCALL, EZIO_LAYER_SYSCALL, sizeof(r), pid, pid};
  r.t_enter = t_enter;
  r.t_exit = t_exit;
  return r;
}

ezio_proc_rec proc(uint8_t kind, uint32_t pid, uint64_t ts, const char* comm) {
  ezio_proc_rec r{};
  r.h = {EZIO_RECORD_VERSION, kind, EZIO_LAYER_PROCESS, sizeof(r), pid, pid};
  r.ts = ts;
  std::strncpy(r.comm, comm, sizeof(r.comm) - 1);
  return r;
}

ezio_file_rec file(uint32_t pid, uint64_t key) {
  ezio_file_rec r{};
  r.h = {EZIO_RECORD_VERSION, EZIO_REC_FILE, EZIO_LAYER_VFS, sizeof(r), pid, pid};
  r.file_key = key;
  return r;
}

template <typename Rec>
void add(FlightBuffer& b, const Rec& r) {
  b.add(&r, sizeof(r));
}

// The records of a window: (kind, t_enter or ts) per event, the file keys of its file records.
struct Content {
  std::set<uint64_t> call_starts;
  std::set<uint64_t> file_keys;
};

Content content(const FlightBuffer::Window& w) {
  Content c;
  for (size_t at = 0; at < w.records.size();) {
    uint32_t size;
    std::memcpy(&size, w.records.data() + at, sizeof(size));
    const char* rec = w.records.data() + at + sizeof(size);
    ezio_header h;
    std::memcpy(&h, rec, sizeof(h));
    if (h.kind == EZIO_REC_SYSCALL) {
      ezio_syscall_rec s;
      std::memcpy(&s, rec, sizeof(s));
      c.call_starts.insert(s.t_enter);
    } else if (h.kind == EZIO_REC_FILE) {
      ezio_file_rec f;
      std::memcpy(&f, rec, sizeof(f));
      c.file_keys.insert(f.file_key);
    }
    at = (at + sizeof(size) + size + 7) & ~size_t{7};
  }
  return c;
}

TEST(FlightBuffer, AWindowHoldsTheEventsWhollyInsideIt) {
  FlightBuffer b(1'000'000'000, 1 << 20);
  add(b, call(10, 100, 200));
  add(b, call(10, 250, 400));  // straddles the window's start
  add(b, call(10, 500, 600));
  add(b, call(10, 700, 950));  // straddles its end
  FlightBuffer::Window w = b.window(300, 900);
  EXPECT_EQ(w.start_ns, 300u);
  EXPECT_EQ(w.end_ns, 900u);
  EXPECT_EQ(w.events, 1u);
  EXPECT_EQ(content(w).call_starts, std::set<uint64_t>{500});
}

TEST(FlightBuffer, EventsOlderThanTheSecondsKeptGo) {
  FlightBuffer b(1000, 1 << 20);
  add(b, call(10, 100, 200));
  add(b, call(10, 1500, 1600));
  b.expire(1300);  // 200 + 1000 < 1300
  EXPECT_EQ(b.events(), 1u);
  EXPECT_EQ(b.dropped(), 0u);  // by age: not a loss
  EXPECT_EQ(content(b.window(0, 2000)).call_starts, std::set<uint64_t>{1500});
}

TEST(FlightBuffer, WhenFullTheOldestGoCountedAndTheWindowStartsAfterThem) {
  FlightBuffer b(1'000'000'000, 4096);
  for (uint64_t t = 1; t <= 100; ++t) add(b, call(10, t * 100, t * 100 + 50));
  EXPECT_GT(b.dropped(), 0u);
  EXPECT_LE(b.bytes(), 4096u);
  EXPECT_EQ(b.events() + b.dropped(), 100u);
  FlightBuffer::Window w = b.window(0, 100'000);
  EXPECT_EQ(w.start_ns, b.dropped_until() + 1);
  EXPECT_EQ(w.events, b.events());  // whole from its start on
  EXPECT_EQ(*content(w).call_starts.begin(), (b.dropped() + 1) * 100);
}

TEST(FlightBuffer, FilesAndNamesOfAWindowsProcessesAreKeptUntilTheirExitGoes) {
  FlightBuffer b(1000, 1 << 20);
  add(b, proc(EZIO_REC_EXEC, 10, 50, "dd"));
  add(b, file(10, 0xf1));
  add(b, file(11, 0xf2));  // another process's, without events in the window
  add(b, call(10, 100, 200));
  add(b, call(11, 100, 200));
  add(b, call(10, 1500, 1600));
  b.expire(1400);  // the exec and the first calls go
  FlightBuffer::Window w = b.window(1400, 2000);
  EXPECT_EQ(content(w).file_keys, std::set<uint64_t>{0xf1});
  ASSERT_EQ(w.processes.size(), 1u);
  EXPECT_EQ(w.processes[0].pid, 10u);
  EXPECT_EQ(w.processes[0].comm, "dd");
  // Its exit, gone with the rest, takes them along.
  add(b, proc(EZIO_REC_EXIT, 10, 1700, "dd"));
  b.expire(5000);
  FlightBuffer::Window later = b.window(0, 6000);
  EXPECT_TRUE(content(later).file_keys.empty());
  EXPECT_TRUE(later.processes.empty());
}

}  // namespace
