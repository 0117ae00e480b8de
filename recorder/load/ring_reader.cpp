#include "recorder/load/ring_reader.h"

#include <linux/bpf.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "common/error.h"
#include "recorder/decode/record_store.h"

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

}  // namespace

RingReader::RingReader(UniqueFd ring, uint64_t ring_bytes, RecordStore& sink)
    : ring_(std::move(ring)),
      mask_(ring_bytes - 1),
      sink_(sink),
      page_(static_cast<size_t>(sysconf(_SC_PAGESIZE))) {
  if (!ring_ || ring_bytes < page_ || (ring_bytes & mask_) != 0) {
    fail("not a ring buffer of {} bytes", ring_bytes);
  }
  consumer_ = mmap(nullptr, page_, PROT_READ | PROT_WRITE, MAP_SHARED, ring_.get(), 0);
  if (consumer_ == MAP_FAILED) {
    consumer_ = nullptr;
    fail("cannot map the ring buffer's consumer page: {}", errno_text(errno));
  }
  producer_ = mmap(nullptr, page_ + 2 * ring_bytes, PROT_READ, MAP_SHARED, ring_.get(), page_);
  if (producer_ == MAP_FAILED) {
    int err = errno;
    munmap(consumer_, page_);
    fail("cannot map the ring buffer's data: {}", errno_text(err));
  }
  epoll_ = UniqueFd(epoll_create1(EPOLL_CLOEXEC));
  if (!epoll_) {
    int err = errno;
    munmap(producer_, page_ + 2 * (mask_ + 1));
    munmap(consumer_, page_);
    fail("cannot create an epoll set: {}", errno_text(err));
  }
  wake_on(ring_.get());
}

RingReader::~RingReader() {
  munmap(producer_, page_ + 2 * (mask_ + 1));
  munmap(consumer_, page_);
}

bool RingReader::drain() {
  auto* cons_ptr = static_cast<uint64_t*>(consumer_);
  const char* data = static_cast<const char*>(producer_) + page_;
  uint64_t cons = load_acquire(cons_ptr);
  bool got_new = true;
  while (got_new) {
    got_new = false;
    uint64_t prod = load_acquire(producer_);
    while (cons < prod) {
      const char* header = data + (cons & mask_);
      uint32_t len = load_acquire32(header);
      if (len & BPF_RINGBUF_BUSY_BIT) return true;  // not committed yet: the next drain's
      got_new = true;
      cons += record_span(len);
      if (!(len & BPF_RINGBUF_DISCARD_BIT)) sink_.add(header + BPF_RINGBUF_HDR_SZ, len);
      // Released after the record was copied: the producer may then reuse its bytes. Moving the
      // position also re-arms the programs' wake-up (bpf/common.bpf.h, submit).
      __atomic_store_n(cons_ptr, cons, __ATOMIC_RELEASE);
      if (sink_.full()) return false;
    }
  }
  return true;
}

bool RingReader::poll(int timeout_ms) {
  epoll_event ev[2];
  if (epoll_wait(epoll_.get(), ev, 2, timeout_ms) < 0 && errno != EINTR) {
    fail("waiting for records failed: {}", errno_text(errno));
  }
  return drain();
}

void RingReader::wake_on(int fd) {
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = fd;
  if (epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &ev) != 0) {
    fail("cannot watch fd {}: {}", fd, errno_text(errno));
  }
}

void RingReader::unwatch(int fd) {
  if (epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, fd, nullptr) != 0) {
    fail("cannot stop watching fd {}: {}", fd, errno_text(errno));
  }
}

}  // namespace ezio::recorder
