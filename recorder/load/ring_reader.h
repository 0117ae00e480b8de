// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Reads one BPF ring buffer through its fd with mmap only, so that it works for a user who received
// the fd from eziotraced. libbpf's ring_buffer cannot serve here: ring_buffer__add() asks the
// kernel for the map's size with bpf_map_get_info_by_fd(), a bpf() system call, which unprivileged
// users may not make (kernel.unprivileged_bpf_disabled = 2 on most distributions); mmap and epoll
// on a ring buffer's fd need no privilege. The layout read is the kernel's (kernel/bpf/ringbuf.c,
// as libbpf's ringbuf.c reads it): a consumer page the reader writes its position to, then a
// producer page and the data pages, mapped twice in a row so that a record wrapping around the end
// reads in one piece; each record starts with an 8-byte header whose length word carries
// BPF_RINGBUF_BUSY_BIT (still being written) and BPF_RINGBUF_DISCARD_BIT (skip it).
//
// The kernel inserts every page of a ring buffer's mapping when it is made, and removes them one
// by one when it is unmapped: for the whole ring, a good part of the CPU of recording `true`
// (docs/costs.md). So the data is mapped lazily: the range of the producer
// page and the data twice is reserved (PROT_NONE) at once, and windows of it are mapped there
// (read-only: the kernel allows those at any page offset) when the records reach them; they stay
// mapped. A recording of a few KiB maps one window.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/unique_fd.h"
#include "recorder/core/record_sink.h"

namespace ezio::recorder {

// One range of mmap'd memory, unmapped with it.
class Mapping {
 public:
  Mapping() = default;
  Mapping(void* addr, size_t bytes) : addr_(static_cast<char*>(addr)), bytes_(bytes) {}
  ~Mapping();
  Mapping(Mapping&& o) noexcept;
  Mapping& operator=(Mapping&& o) noexcept;
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  char* data() const { return addr_; }

 private:
  char* addr_ = nullptr;
  size_t bytes_ = 0;
};

class RingReader {
 public:
  // ring_bytes: the ring's size (its max_entries), a power of two; records go to sink.
  // window_bytes: how much data one mmap maps (a power of two of at least a page; 0: the
  // default, kDefaultWindow or 1/64 of the ring if larger, at most the ring).
  RingReader(UniqueFd ring, uint64_t ring_bytes, RecordSink& sink, uint64_t window_bytes = 0);
  RingReader(const RingReader&) = delete;
  RingReader& operator=(const RingReader&) = delete;

  static constexpr uint64_t kDefaultWindow = 1 << 20;

  // Readable (epoll) when the programs wake the reader: RingGroup waits on it, and is the one way
  // to wait for records (a session's rings, or a single one).
  int fd() const { return ring_.get(); }
  // Hands the records to the sink until the ring is empty (true) or the sink is full
  // (RecordSink::full()) or max_bytes of the ring were read (false: the rest waits in the ring).
  bool drain(uint64_t max_bytes = UINT64_MAX);
  // Bytes of data mapped so far (both copies counted).
  uint64_t mapped_bytes() const;

 private:
  // Maps the windows of [from, to) (offsets in the data mapped twice) not mapped yet.
  void map_windows(uint64_t from, uint64_t to);
  // Maps what the records in [cons, prod) (ring positions) lie in: in the first copy of the data;
  // a record wrapping around the end maps the start of the second copy itself.
  void reach(uint64_t cons, uint64_t prod);

  UniqueFd ring_;
  uint64_t mask_;
  RecordSink& sink_;
  size_t page_;
  uint64_t window_;
  Mapping consumer_;  // one page, read-write: the consumer position
  Mapping view_;      // the producer page, then the data twice: reserved, mapped by windows
  const char* data_ = nullptr;
  std::vector<bool> mapped_;  // per window of the data twice
};

}  // namespace ezio::recorder
