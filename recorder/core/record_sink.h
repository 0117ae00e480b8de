// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Where RingReader hands the ring's records: RecordStore in the recorder, a checker in the tests
// of the reader itself.
#include <cstddef>
#include <cstdint>

namespace ezio::recorder {

class RecordSink {
 public:
  // One record's bytes, valid during the call only.
  virtual void add(const void* data, size_t size) = 0;
  // True: the reader stops draining, the rest waits in the ring.
  virtual bool full() const = 0;
  // A session with several rings (RingGroup): the records that follow come from ring `ring`...
  virtual void from_ring(unsigned /*ring*/) {}
  // ...and ring `ring` held no committed record at at_ns (CLOCK_MONOTONIC, read before the
  // reader found it empty).
  virtual void ring_emptied(unsigned /*ring*/, uint64_t /*at_ns*/) {}

 protected:
  ~RecordSink() = default;
};

}  // namespace ezio::recorder
