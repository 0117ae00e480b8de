// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/load/ring_reader.h"

#include <linux/bpf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "common/error.h"

namespace ezio::recorder {
namespace {

// The bytes a record of header word len takes in the ring: header, data, rounded up to 8.
uint64_t record_span(uint32_t len) {
  uint64_t data = len & ~(BPF_RINGBUF_BUSY_BIT | BPF_RINGBUF_DISCARD_BIT);
  return (data + BPF_RINGBUF_HDR_SZ + 7) / 8 * 8;
}

// The producer commits a record by clearing BUSY with a release store of its header, and moves
// its position the same way: the acquire loads pair with those, so a record read is complete.
uint64_t load_acquire(const void* p) {
  return __atomic_load_n(static_cast<const uint64_t*>(p), __ATOMIC_ACQUIRE);
}

uint32_t load_acquire32(const void* p) {
  return __atomic_load_n(static_cast<const uint32_t*>(p), __ATOMIC_ACQUIRE);
}

uint64_t choose_window(uint64_t asked, uint64_t ring_bytes, size_t page) {
  // A window's mapping costs little below 1 MiB, and smaller ones save little for many more
  // mappings (docs/costs.md, Reading the ring buffer). Past 64 windows a copy, the larger
  // rings take larger windows: each window is a mapping of its own (the kernel does not merge
  // them), and a process may have only so many.
  uint64_t w = asked ? asked : std::max(RingReader::kDefaultWindow, ring_bytes / 64);
  if (w < page || (w & (w - 1)) != 0) fail("not a window of the ring buffer: {} bytes", w);
  return std::min(w, ring_bytes);
}

void* map_or_fail(void* at, size_t bytes, int prot, int flags, int fd, off_t offset,
                  const char* what) {
  void* p = mmap(at, bytes, prot, flags, fd, offset);
  if (p == MAP_FAILED) fail("cannot map {}: {}", what, errno_text(errno));
  return p;
}

}  // namespace

Mapping::~Mapping() {
  if (addr_) munmap(addr_, bytes_);
}

Mapping::Mapping(Mapping&& o) noexcept
    : addr_(std::exchange(o.addr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}

Mapping& Mapping::operator=(Mapping&& o) noexcept {
  if (this != &o) {
    if (addr_) munmap(addr_, bytes_);
    addr_ = std::exchange(o.addr_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
  }
  return *this;
}

RingReader::RingReader(UniqueFd ring, uint64_t ring_bytes, RecordSink& sink, uint64_t window_bytes)
    : ring_(std::move(ring)),
      mask_(ring_bytes - 1),
      sink_(sink),
      page_(static_cast<size_t>(sysconf(_SC_PAGESIZE))) {
  if (!ring_ || ring_bytes < page_ || (ring_bytes & mask_) != 0) {
    fail("not a ring buffer of {} bytes", ring_bytes);
  }
  window_ = choose_window(window_bytes, ring_bytes, page_);
  consumer_ = Mapping(map_or_fail(nullptr, page_, PROT_READ | PROT_WRITE, MAP_SHARED, ring_.get(),
                                  0, "the ring buffer's consumer page"),
                      page_);
  // Address space only (no memory, no page tables) until the windows replace parts of it; one
  // munmap of the whole range unmaps the windows and the rest.
  view_ = Mapping(map_or_fail(nullptr, page_ + 2 * ring_bytes, PROT_NONE,
                              MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0,
                              "address space for the ring buffer"),
                  page_ + 2 * ring_bytes);
  // The producer page is the ring's page 1, its data starts at page 2; inside view_, which
  // unmaps it.
  map_or_fail(view_.data(), page_, PROT_READ, MAP_SHARED | MAP_FIXED, ring_.get(),
              static_cast<off_t>(page_), "the ring buffer's producer page");
  data_ = view_.data() + page_;
  mapped_.assign(2 * ring_bytes / window_, false);
}

void RingReader::map_windows(uint64_t from, uint64_t to) {
  to = std::min(to, 2 * (mask_ + 1));
  for (uint64_t w = from / window_; w * window_ < to; ++w) {
    if (mapped_[w]) continue;
    // Inside view_, which unmaps it.
    map_or_fail(const_cast<char*>(data_) + w * window_, window_, PROT_READ, MAP_SHARED | MAP_FIXED,
                ring_.get(), static_cast<off_t>(2 * page_ + w * window_),
                "a window of the ring buffer's data");
    mapped_[w] = true;
  }
}

void RingReader::reach(uint64_t cons, uint64_t prod) {
  uint64_t ring_bytes = mask_ + 1;
  uint64_t from = cons & mask_;
  uint64_t to = from + (prod - cons);
  map_windows(from, std::min(to, ring_bytes));
  if (to > ring_bytes) map_windows(0, to - ring_bytes);
}

uint64_t RingReader::mapped_bytes() const {
  return static_cast<uint64_t>(std::count(mapped_.begin(), mapped_.end(), true)) * window_;
}

bool RingReader::drain(uint64_t max_bytes) {
  auto* cons_ptr = reinterpret_cast<uint64_t*>(consumer_.data());
  const char* producer = view_.data();
  uint64_t ring_bytes = mask_ + 1;
  uint64_t cons = load_acquire(cons_ptr);
  const uint64_t budget_end = max_bytes > UINT64_MAX - cons ? UINT64_MAX : cons + max_bytes;
  bool got_new = true;
  while (got_new) {
    got_new = false;
    uint64_t prod = load_acquire(producer);
    if (cons < prod) reach(cons, prod);
    while (cons < prod) {
      uint64_t at = cons & mask_;
      uint32_t len = load_acquire32(data_ + at);
      if (len & BPF_RINGBUF_BUSY_BIT) return true;  // not committed yet: the next drain's
      got_new = true;
      uint64_t span = record_span(len);
      if (at + span > ring_bytes) map_windows(ring_bytes, at + span);  // read in one piece
      cons += span;
      if (!(len & BPF_RINGBUF_DISCARD_BIT)) sink_.add(data_ + at + BPF_RINGBUF_HDR_SZ, len);
      // Released after the record was copied: the producer may then reuse its bytes. Moving the
      // position also re-arms the programs' wake-up (bpf/common.bpf.h, submit).
      __atomic_store_n(cons_ptr, cons, __ATOMIC_RELEASE);
      if (sink_.full() || cons >= budget_end) return false;
    }
  }
  return true;
}

}  // namespace ezio::recorder
