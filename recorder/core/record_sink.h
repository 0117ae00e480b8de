// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Where RingReader hands the ring's records: RecordStore in the recorder, a checker in the tests
// of the reader itself.
#include <cstddef>

namespace ezio::recorder {

class RecordSink {
 public:
  // One record's bytes, valid during the call only.
  virtual void add(const void* data, size_t size) = 0;
  // True: the reader stops draining, the rest waits in the ring.
  virtual bool full() const = 0;

 protected:
  ~RecordSink() = default;
};

}  // namespace ezio::recorder
