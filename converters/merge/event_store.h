// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Events kept in an unlinked temporary file next to the output, in a compact binary form (times
// as deltas, fields and attribute values as varints: ~20-30 bytes an event), location by
// location. The merge decodes each OTF2 archive once, into a store, and replays the events from
// there as often as it needs (docs/merge.md, "Streaming"): OTF2's decoding of attribute lists was
// the largest cost of every pass over an archive. Memory: a write buffer and one read buffer per
// cursor, whatever the number of events. It can also be filled while a recording is written, the
// events of many locations interleaved (otf2::EventTap): each location's records are then kept in
// parts of the file, written out when the buffered records of all locations reach 1 MiB.
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <vector>

#include "common/otf2/event_tap.h"
#include "common/otf2/events.h"
#include "common/unique_fd.h"

namespace ezio::converters {

class EventStore : public otf2::EventTap {
 public:
  // The file is created in dir (on the output's file system) and gone when the store is.
  explicit EventStore(const std::filesystem::path& dir);
  EventStore(const EventStore&) = delete;
  EventStore& operator=(const EventStore&) = delete;

  // Filling: the events of one location after the other, each location once. A location can be
  // read once it has ended.
  void begin_location(OTF2_LocationRef loc);
  void append(const otf2::Event& e);
  void end_location();

  // Filling from a tap: events of any location in any order, each location's in its order.
  void event(OTF2_LocationRef loc, const otf2::Event& e) override;
  // Writes out what the tap left buffered: the store can be read from now on.
  void seal();

  // Locations stored (begun, with events or not), in id order.
  struct Part {
    uint64_t offset = 0, bytes = 0;
  };
  struct Extent {
    uint64_t bytes = 0, events = 0;
    std::vector<Part> parts;  // its records, in order, in these ranges of the file
  };
  const std::map<OTF2_LocationRef, Extent>& locations() const { return locations_; }
  uint64_t bytes() const { return size_; }

  // One location's events again, in the order appended; a location not stored has none.
  class Cursor {
   public:
    Cursor(const EventStore& store, OTF2_LocationRef loc);
    // The next event, nullptr after the last; valid until the next call.
    const otf2::Event* next();

   private:
    bool fill(size_t need);
    // Reads what the buffer has room for from the parts not read yet (false: none left).
    bool read_more();

    const EventStore& store_;
    const std::vector<Part>* parts_ = nullptr;
    size_t part_ = 0;                // the part being read
    uint64_t offset_ = 0, end_ = 0;  // in the file, not read yet, of that part
    std::vector<uint8_t> buf_;
    size_t len_ = 0, pos_ = 0;  // bytes read into buf_, and decoded
    uint64_t time_ = 0;
    otf2::Event event_{};
  };

 private:
  // Writes e's record (without its length) at out, which has room; returns its length.
  size_t encode(const otf2::Event& e, uint8_t* out);
  // Room e's record may take, its length included.
  static size_t most_bytes(const otf2::Event& e);
  // Writes e's record, its length first, at out (room: most_bytes(e)); returns its size.
  size_t put_record(const otf2::Event& e, uint8_t* out);
  // e's record with its length, in record_; returns where it starts and its size.
  std::pair<const uint8_t*, size_t> record(const otf2::Event& e);
  // Writes each location's records the tap left buffered as a part of it.
  void write_tapped();
  void put(const uint8_t* data, size_t n);
  void flush();

  std::filesystem::path dir_;
  UniqueFd fd_;
  std::map<OTF2_LocationRef, Extent> locations_;
  Extent* current_ = nullptr;
  uint64_t start_ = 0;              // offset of the current location's first record
  uint64_t size_ = 0;               // bytes appended, buffered ones included
  uint64_t written_ = 0;            // bytes in the file
  std::unique_ptr<uint8_t[]> buf_;  // written out when full
  size_t used_ = 0;
  std::vector<uint8_t> record_;  // room for the record being encoded
  uint64_t time_ = 0;            // of the location's previous event
  // Filled by the tap: each location's records not written yet, and its previous event's time.
  struct Tapped {
    std::vector<uint8_t> records;
    uint64_t time = 0;
  };
  std::map<OTF2_LocationRef, Tapped> tapped_;
  size_t tapped_bytes_ = 0;
  OTF2_LocationRef tap_loc_ = 0;  // the location of the tap's previous event, kept at hand
  Tapped* tap_at_ = nullptr;
  Extent* tap_extent_ = nullptr;
};

}  // namespace ezio::converters
