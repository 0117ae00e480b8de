// SPDX-License-Identifier: GPL-2.0-only
#include "converters/merge/event_store.h"

#include <algorithm>
#include <cstring>

#include "common/error.h"
#include "converters/merge/temp_file.h"

// A record: varint length of what follows, the kind (a byte), the time's difference to the
// location's previous event (zigzag varint), a byte saying which of ref, ref2, a, b, f1, f2, f3
// are not 0 (bit 7: attributes or metric values follow), those fields as varints, then the
// attributes (count; id, type, value) and the metric values (count; type, 8 bytes). An attribute
// value keeps the bytes of its type's member of the union only: OTF2 reads and writes no others.
namespace ezio::converters {
namespace {

constexpr size_t kWriteBuffer = 1 << 20;
constexpr size_t kReadBuffer = 256 << 10;

// Writes a varint at p, which advances.
inline void put_varint(uint8_t*& p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<uint8_t>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<uint8_t>(v);
}

constexpr size_t kMaxVarint = 10;

// Reads a varint; p advances. Records are whole in the buffer (their length says where they end).
// Most values (kinds of fields, attribute ids, small deltas) take one byte: that case first.
inline uint64_t get_varint(const uint8_t*& p) {
  uint64_t v = *p++;
  if (v < 0x80) return v;
  v &= 0x7f;
  for (int shift = 7;; shift += 7) {
    const uint8_t b = *p++;
    v |= uint64_t(b & 0x7f) << shift;
    if (!(b & 0x80)) return v;
  }
}

// Bytes of the union member of an attribute of this type (8 for unknown types: all of it).
inline size_t value_width(OTF2_Type t) {
  switch (t) {
    case OTF2_TYPE_UINT8:
    case OTF2_TYPE_INT8:
      return 1;
    case OTF2_TYPE_UINT16:
    case OTF2_TYPE_INT16:
      return 2;
    case OTF2_TYPE_UINT64:
    case OTF2_TYPE_INT64:
    case OTF2_TYPE_DOUBLE:
    case OTF2_TYPE_LOCATION:
      return 8;
    case OTF2_TYPE_NONE:
      return 8;
    default:
      return t <= OTF2_TYPE_LOCATION_GROUP ? 4 : 8;  // float and references: 32 bits
  }
}

// The value's member of its type, widened (floats as their bits).
inline uint64_t value_bits(const OTF2_AttributeValue& v, size_t width) {
  switch (width) {
    case 1:
      return v.uint8;
    case 2:
      return v.uint16;
    case 4:
      return v.uint32;
    default:
      return v.uint64;
  }
}

inline OTF2_AttributeValue value_of(uint64_t bits, size_t width) {
  OTF2_AttributeValue v;
  v.uint64 = 0;
  switch (width) {
    case 1:
      v.uint8 = static_cast<uint8_t>(bits);
      break;
    case 2:
      v.uint16 = static_cast<uint16_t>(bits);
      break;
    case 4:
      v.uint32 = static_cast<uint32_t>(bits);
      break;
    default:
      v.uint64 = bits;
      break;
  }
  return v;
}

// The attributes and metric values of a record at p (which advances) into e, written in place:
// the vectors keep their room from one event to the next.
void decode_extra(const uint8_t*& p, otf2::Event& e) {
  e.attributes.resize(get_varint(p));
  for (otf2::Attribute& a : e.attributes) {
    a.id = static_cast<otf2::Ref>(get_varint(p));
    a.type = *p++;
    const size_t w = value_width(a.type);
    uint64_t v = 0;
    if (a.type == OTF2_TYPE_FLOAT || a.type == OTF2_TYPE_DOUBLE) {
      std::memcpy(&v, p, w);  // little-endian: a float's 4 bytes are the low ones
      p += w;
    } else {
      v = get_varint(p);
    }
    a.value = value_of(v, w);
  }
  const size_t metrics = get_varint(p);
  e.metric_types.resize(metrics);
  e.metric_values.resize(metrics);
  for (size_t i = 0; i < metrics; ++i) {
    e.metric_types[i] = *p++;
    std::memcpy(&e.metric_values[i], p, sizeof(OTF2_MetricValue));
    p += sizeof(OTF2_MetricValue);
  }
}

}  // namespace

EventStore::EventStore(const std::filesystem::path& dir)
    : dir_(dir), fd_(temporary_file(dir)), buf_(new uint8_t[kWriteBuffer]) {}

void EventStore::begin_location(OTF2_LocationRef loc) {
  auto [it, added] = locations_.try_emplace(loc);
  if (!added) fail("the merge stored the events of location {} twice", loc);
  current_ = &it->second;
  start_ = size_;
  time_ = 0;
}

size_t EventStore::most_bytes(const otf2::Event& e) {
  // Its length, then at most: kind, time, mask, 7 fields, 2 counts, the attributes and metrics.
  return kMaxVarint + 3 + 10 * kMaxVarint + e.attributes.size() * (2 * kMaxVarint + 1) +
         e.metric_types.size() * (1 + sizeof(OTF2_MetricValue));
}

size_t EventStore::put_record(const otf2::Event& e, uint8_t* out) {
  // The body goes after a byte for its length, which is enough below 128 bytes (most records);
  // a longer one moves the body to make room for its length.
  const size_t length = encode(e, out + 1);
  if (length < 0x80) {
    out[0] = static_cast<uint8_t>(length);
    return 1 + length;
  }
  uint8_t prefix[kMaxVarint];
  uint8_t* end = prefix;
  put_varint(end, length);
  const auto prefix_bytes = static_cast<size_t>(end - prefix);
  std::memmove(out + prefix_bytes, out + 1, length);
  std::memcpy(out, prefix, prefix_bytes);
  return prefix_bytes + length;
}

std::pair<const uint8_t*, size_t> EventStore::record(const otf2::Event& e) {
  const size_t most = most_bytes(e);
  if (record_.size() < most) record_.resize(most);
  return {record_.data(), put_record(e, record_.data())};
}

void EventStore::append(const otf2::Event& e) {
  ++current_->events;
  const size_t most = most_bytes(e);
  if (used_ + most > kWriteBuffer) flush();
  if (most > kWriteBuffer) {  // a record that may not fit the buffer goes through record_
    auto [data, n] = record(e);
    put(data, n);
    return;
  }
  used_ += put_record(e, buf_.get() + used_);  // straight into the buffer: no copy
}

void EventStore::event(OTF2_LocationRef loc, const otf2::Event& e) {
  if (current_) fail("the merge's event store was filled two ways at once (location {})", loc);
  if (!tap_at_ || tap_loc_ != loc) {  // the recorder writes a location's events in runs
    tap_at_ = &tapped_[loc];
    tap_extent_ = &locations_[loc];
    tap_loc_ = loc;
  }
  Tapped& t = *tap_at_;
  Extent& extent = *tap_extent_;
  time_ = t.time;
  auto [data, n] = record(e);
  t.time = time_;
  t.records.insert(t.records.end(), data, data + n);
  ++extent.events;
  tapped_bytes_ += n;
  if (tapped_bytes_ >= kWriteBuffer) write_tapped();
}

void EventStore::write_tapped() {
  for (auto& [loc, t] : tapped_) {
    if (t.records.empty()) continue;
    Extent& extent = locations_[loc];
    extent.parts.push_back({written_ + used_, t.records.size()});  // where put() puts it
    extent.bytes += t.records.size();
    put(t.records.data(), t.records.size());
    t.records.clear();
    // A location that had a burst once does not keep its buffer for good.
    if (t.records.capacity() > (64u << 10)) t.records.shrink_to_fit();
  }
  tapped_bytes_ = 0;
}

void EventStore::seal() {
  write_tapped();
  flush();
}

void EventStore::put(const uint8_t* data, size_t n) {
  if (used_ + n > kWriteBuffer) flush();
  if (n > kWriteBuffer) {  // a record larger than the buffer goes straight to the file
    write_fully(fd_.get(), data, n, written_, dir_);
    written_ += n;
    size_ = written_;
    return;
  }
  std::memcpy(buf_.get() + used_, data, n);
  used_ += n;
}

void EventStore::end_location() {
  flush();
  current_->bytes = size_ - start_;
  if (current_->bytes) current_->parts.push_back({start_, current_->bytes});
  current_ = nullptr;
}

void EventStore::flush() {
  write_fully(fd_.get(), buf_.get(), used_, written_, dir_);
  written_ += used_;
  size_ = written_;
  used_ = 0;
}

size_t EventStore::encode(const otf2::Event& e, uint8_t* const out) {
  uint8_t* p = out;
  *p++ = static_cast<uint8_t>(e.kind);
  const auto delta = static_cast<int64_t>(e.time - time_);
  time_ = e.time;
  put_varint(p, (static_cast<uint64_t>(delta) << 1) ^ static_cast<uint64_t>(delta >> 63));
  // The mask's byte first, filled as the fields not 0 are written after it, in order.
  uint8_t* const mask_at = p++;
  uint8_t mask = 0;
  auto field = [&p, &mask](int i, uint64_t v) {
    if (!v) return;
    mask |= uint8_t(1u << i);
    put_varint(p, v);
  };
  field(0, e.ref);
  field(1, e.ref2);
  field(2, e.a);
  field(3, e.b);
  field(4, e.f1);
  field(5, e.f2);
  field(6, e.f3);
  const bool extra = !e.attributes.empty() || !e.metric_types.empty();
  *mask_at = mask | (extra ? 0x80 : 0);
  if (!extra) return static_cast<size_t>(p - out);
  put_varint(p, e.attributes.size());
  for (const otf2::Attribute& a : e.attributes) {
    put_varint(p, a.id);
    *p++ = a.type;
    const size_t w = value_width(a.type);
    const uint64_t v = value_bits(a.value, w);
    if (a.type == OTF2_TYPE_FLOAT || a.type == OTF2_TYPE_DOUBLE) {
      std::memcpy(p, &v, 8);  // little-endian: the float's 4 bytes first
      p += w;
    } else {
      put_varint(p, v);
    }
  }
  put_varint(p, e.metric_types.size());
  for (size_t i = 0; i < e.metric_types.size(); ++i) {
    *p++ = e.metric_types[i];
    std::memcpy(p, &e.metric_values[i], sizeof(OTF2_MetricValue));
    p += sizeof(OTF2_MetricValue);
  }
  return static_cast<size_t>(p - out);
}

EventStore::Cursor::Cursor(const EventStore& store, OTF2_LocationRef loc) : store_(store) {
  if (auto it = store.locations_.find(loc); it != store.locations_.end()) {
    parts_ = &it->second.parts;
  }
}

bool EventStore::Cursor::read_more() {
  while (offset_ == end_) {
    if (!parts_ || part_ == parts_->size()) return false;
    offset_ = (*parts_)[part_].offset;
    end_ = offset_ + (*parts_)[part_].bytes;
    ++part_;
  }
  const auto more = static_cast<size_t>(std::min<uint64_t>(end_ - offset_, buf_.size() - len_));
  read_fully(store_.fd_.get(), buf_.data() + len_, more, offset_, store_.dir_);
  offset_ += more;
  len_ += more;
  return true;
}

// Makes the buffer hold at least `need` bytes from pos_ (false: the location has fewer left).
bool EventStore::Cursor::fill(size_t need) {
  if (len_ - pos_ >= need) return true;
  const size_t keep = len_ - pos_;
  std::memmove(buf_.data(), buf_.data() + pos_, keep);
  pos_ = 0;
  len_ = keep;
  if (buf_.size() < std::max(need, kReadBuffer)) buf_.resize(std::max(need, kReadBuffer));
  while (len_ < need && len_ < buf_.size()) {
    if (!read_more()) break;
  }
  return len_ >= need;
}

const otf2::Event* EventStore::Cursor::next() {
  // A length takes at most 10 bytes; the record it announces is then read whole. The buffer
  // mostly holds both already: fill() is called only when it does not.
  if (len_ - pos_ < kMaxVarint && !fill(kMaxVarint) && len_ == pos_) return nullptr;
  const uint8_t* p = buf_.data() + pos_;
  const size_t length = get_varint(p);
  const size_t header = static_cast<size_t>(p - (buf_.data() + pos_));
  if (len_ - pos_ < header + length && !fill(header + length))
    fail("{}: the merge's temporary file is truncated", store_.dir_.string());
  p = buf_.data() + pos_ + header;
  pos_ += header + length;

  otf2::Event& e = event_;
  e.kind = static_cast<otf2::EventKind>(*p++);
  const uint64_t zz = get_varint(p);
  time_ += static_cast<uint64_t>(static_cast<int64_t>(zz >> 1) ^ -static_cast<int64_t>(zz & 1));
  e.time = time_;
  const uint8_t mask = *p++;
  // The fields in the order encode() puts them, each only when its bit is set.
  auto field = [&p, mask](int i) -> uint64_t { return mask & (1u << i) ? get_varint(p) : 0; };
  e.ref = static_cast<otf2::Ref>(field(0));
  e.ref2 = static_cast<otf2::Ref>(field(1));
  e.a = field(2);
  e.b = field(3);
  e.f1 = static_cast<uint32_t>(field(4));
  e.f2 = static_cast<uint32_t>(field(5));
  e.f3 = static_cast<uint32_t>(field(6));
  if (!(mask & 0x80)) {
    e.attributes.clear();
    e.metric_types.clear();
    e.metric_values.clear();
    return &e;
  }
  decode_extra(p, e);
  return &e;
}

}  // namespace ezio::converters
