// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The flight recorder's overwrite ring of one job (docs/flight-recorder.md): the records of its
// session's BPF ring, drained continuously by eziotraced, kept for the last N seconds within a
// memory bound. A BPF ring buffer does not overwrite (a full one refuses new records), so the
// overwriting is done here, where the oldest records can go first.
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "recorder/core/record_sink.h"

namespace ezio::recorder::service {

// When a record's event began and ended (CLOCK_MONOTONIC ns); false for a record that is no event
// (where a file is: EZIO_REC_FILE) or one too short for its kind.
bool record_span(const void* data, size_t size, uint64_t& begin, uint64_t& end);

struct KnownProcess {
  uint32_t pid = 0, ppid = 0;
  std::string comm, exe;
};

class FlightBuffer final : public RecordSink {
 public:
  // keep_ns: how long an event is kept after its end; max_bytes: the records' memory, at most.
  FlightBuffer(uint64_t keep_ns, uint64_t max_bytes) : keep_ns_(keep_ns), max_bytes_(max_bytes) {}
  void add(const void* data, size_t size) override;
  bool full() const override { return false; }  // it overwrites: the BPF ring never waits
  // A process the job had before its recording began, which no fork or exec record names: named
  // by eziotraced from /proc as it adds it (a later fork or exec record names it anew).
  void name_running(const KnownProcess& p) { processes_.try_emplace(p.pid, p); }
  // Forgets the events that ended more than keep_ns before now.
  void expire(uint64_t now_ns);

  struct Window {
    uint64_t start_ns = 0, end_ns = 0;  // what it holds whole: start may be later than asked
    uint64_t events = 0;
    std::vector<char> records;            // each: u32 size, the record, padded to 8 bytes
    std::vector<KnownProcess> processes;  // of the window's processes, their exec before it
  };
  // The events that began at or after start and ended at or before end, with the file records of
  // their processes (where their files are: no events). When room was made by dropping events that
  // ended after start, the window starts after the last of them.
  Window window(uint64_t start_ns, uint64_t end_ns) const;

  uint64_t bytes() const { return bytes_; }
  uint64_t events() const { return events_.size(); }
  // Events dropped to make room (not by age) since the job's recording began.
  uint64_t dropped() const { return dropped_; }
  // The end of the latest event dropped to make room (0: none).
  uint64_t dropped_until() const { return dropped_until_; }

 private:
  struct Held {
    uint64_t begin, end;
    std::string rec;
  };
  void pop_oldest();
  void forget_process(uint32_t pid);

  uint64_t keep_ns_, max_bytes_;
  std::deque<Held> events_;
  // Not events, kept while their process has events here: where each file is, per (pid, file
  // key), and the process's name (its last fork or exec record).
  std::map<std::pair<uint32_t, uint64_t>, std::string> files_;
  std::map<uint32_t, KnownProcess> processes_;
  uint64_t bytes_ = 0, dropped_ = 0, dropped_until_ = 0;
};

}  // namespace ezio::recorder::service
