// SPDX-License-Identifier: GPL-2.0-only
// RingReader against a real BPF ring buffer (recorder/load/ring_reader.h): tests/bpf/ring/
// ring_writer.bpf.c writes records of the sizes and bytes the test chooses. The reader maps the
// ring's data by windows as the records reach them; records that straddle two windows, or the end
// of the ring (read through the data's second mapping), must arrive whole and in order. Root.
#include "recorder/load/ring_reader.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <gtest/gtest.h>
#include <linux/bpf.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <stdexcept>

#include "recorder/core/record_sink.h"
#include "ring_writer.skel.h"

namespace ezio::recorder {
namespace {

// A record's size and bytes follow from its sequence number: sizes from 0 to ~7 KiB, most not a
// multiple of 8, larger than a page (the test's window) for some.
uint32_t record_size(uint32_t seq) { return seq * 2654435761u % 7001; }
uint8_t record_byte(uint32_t seq, uint32_t i) { return static_cast<uint8_t>(seq * 31 + i * 7); }

// The bytes a record of `size` takes in the ring: the kernel's 8-byte header, rounded up to 8.
uint64_t ring_span(uint32_t size) { return (size + BPF_RINGBUF_HDR_SZ + 7) / 8 * 8; }

// The ring buffer and the program that writes into it.
class Writer {
 public:
  explicit Writer(uint64_t ring_bytes) : skel_(ring_writer__open()) {
    if (!skel_) throw std::runtime_error("cannot open the ring writer's BPF object");
    if (bpf_map__set_max_entries(skel_->maps.ring, static_cast<uint32_t>(ring_bytes)) != 0 ||
        ring_writer__load(skel_.get()) != 0) {
      throw std::runtime_error("cannot load the ring writer (root and BPF needed)");
    }
  }
  UniqueFd ring() const { return UniqueFd(dup(bpf_map__fd(skel_->maps.ring))); }
  // Writes record seq: 0, or -EAGAIN while the ring has no room for it.
  int write(uint32_t seq) {
    uint32_t size = record_size(seq);
    for (uint32_t i = 0; i < size; ++i)
      skel_->bss->payload[i] = static_cast<char>(record_byte(seq, i));
    std::memcpy(skel_->bss->payload, &seq, std::min<uint32_t>(size, sizeof seq));
    uint32_t ask = size;  // struct ring_writer_ask
    LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &ask, .ctx_size_in = sizeof ask);
    if (bpf_prog_test_run_opts(bpf_program__fd(skel_->progs.write_record), &opts) != 0) {
      throw std::runtime_error(std::string("cannot run the ring writer: ") + strerror(errno));
    }
    return static_cast<int>(opts.retval);
  }

 private:
  struct Destroy {
    void operator()(ring_writer* s) const { ring_writer__destroy(s); }
  };
  std::unique_ptr<ring_writer, Destroy> skel_;
};

// Checks every record against the one expected next.
class Checker final : public RecordSink {
 public:
  void add(const void* data, size_t size) override {
    const auto* bytes = static_cast<const uint8_t*>(data);
    uint32_t seq = next_++;
    bool ok = size == record_size(seq);
    uint32_t got_seq = seq;
    if (ok && size >= sizeof got_seq) std::memcpy(&got_seq, bytes, sizeof got_seq);
    ok = ok && got_seq == seq;
    for (uint32_t i = sizeof seq; ok && i < size; ++i) ok = bytes[i] == record_byte(seq, i);
    if (!ok) ++bad_;
  }
  bool full() const override { return false; }
  uint32_t received() const { return next_; }
  uint32_t bad() const { return bad_; }

 private:
  uint32_t next_ = 0;
  uint32_t bad_ = 0;
};

TEST(RingReader, RecordsStraddlingWindowsAndTheRingsEndArriveWholeAndInOrder) {
  const uint64_t ring_bytes = 64 * 1024;
  const uint64_t window = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  const uint32_t records = 4000;  // ~14 MiB: the ring wraps ~200 times
  Writer writer(ring_bytes);
  Checker checker;
  RingReader reader(writer.ring(), ring_bytes, checker, window);
  uint64_t pos = 0, straddle_window = 0, straddle_end = 0;
  for (uint32_t seq = 0; seq < records; ++seq) {
    uint64_t at = pos & (ring_bytes - 1), span = ring_span(record_size(seq));
    straddle_window += at / window != (at + span - 1) / window;
    straddle_end += at + span > ring_bytes;
    pos += span;
    while (writer.write(seq) == -EAGAIN) reader.drain();
    if (seq % 7 == 0) reader.drain();  // the reader behind by a varying number of records
  }
  reader.drain();
  // What the test is about did happen.
  ASSERT_GT(straddle_window, 100u);
  ASSERT_GT(straddle_end, 50u);
  EXPECT_EQ(checker.received(), records);
  EXPECT_EQ(checker.bad(), 0u);
  // The data's second mapping serves the records wrapping around the end only: the largest reaches
  // two windows into it.
  EXPECT_LE(reader.mapped_bytes(), ring_bytes + 2 * window);
}

TEST(RingReader, AFewRecordsMapOneWindowOfTheRing) {
  const uint64_t ring_bytes = 4 << 20;
  Writer writer(ring_bytes);
  Checker checker;
  RingReader reader(writer.ring(), ring_bytes, checker);
  EXPECT_EQ(reader.mapped_bytes(), 0u);
  for (uint32_t seq = 0; seq < 3; ++seq) ASSERT_EQ(writer.write(seq), 0);
  reader.drain();
  EXPECT_EQ(checker.received(), 3u);
  EXPECT_EQ(checker.bad(), 0u);
  EXPECT_EQ(reader.mapped_bytes(), RingReader::kDefaultWindow);
}

TEST(RingReader, AWindowThatIsNotAPowerOfTwoIsRefused) {
  Writer writer(64 * 1024);
  Checker checker;
  EXPECT_THROW(RingReader(writer.ring(), 64 * 1024, checker, 12345), std::exception);
}

}  // namespace
}  // namespace ezio::recorder
