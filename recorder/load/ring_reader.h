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
#include <cstddef>
#include <cstdint>

#include "common/unique_fd.h"

namespace ezio::recorder {

class RecordStore;

class RingReader {
 public:
  // ring_bytes: the ring's size (its max_entries), a power of two; records go to sink.
  RingReader(UniqueFd ring, uint64_t ring_bytes, RecordStore& sink);
  ~RingReader();
  RingReader(const RingReader&) = delete;
  RingReader& operator=(const RingReader&) = delete;

  // Readable (epoll) when the programs wake the reader.
  int fd() const { return ring_.get(); }
  // Hands the records to the sink until the ring is empty (true) or the sink is full
  // (RecordStore::full(); false: the rest waits in the ring).
  bool drain();
  // Waits up to timeout_ms for the ring's wake-up or one of the wake_on fds, then drains.
  bool poll(int timeout_ms);
  void wake_on(int fd);
  // Stops watching an fd given to wake_on (an exited process's pidfd stays readable).
  void unwatch(int fd);

 private:
  UniqueFd ring_;
  uint64_t mask_;
  RecordStore& sink_;
  size_t page_;
  void* consumer_ = nullptr;  // one page, read-write: the consumer position
  void* producer_ = nullptr;  // read-only: the producer page, then the data twice
  UniqueFd epoll_;
};

}  // namespace ezio::recorder
