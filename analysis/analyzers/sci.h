// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Single-pass interference score (SCI). Calls of one region are split into size classes
// (0: no byte count, k: bytes in [2^(k-1), 2^k)). A call's time at the best observed speed is the
// minimum duration of its class (class 0) or bytes x the minimum time per byte of its class.
// SCI = (total - sum of best times) / total. Both sums only need per-class count, min and byte
// sum, so the score is exact with bounded memory; classes merge across threads exactly.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <vector>

namespace ezio::analysis {

class SciAccumulator {
 public:
  void add(uint64_t duration, bool has_bytes, uint64_t bytes) {
    uint8_t cls = has_bytes && bytes > 0 ? static_cast<uint8_t>(64 - std::countl_zero(bytes)) : 0;
    Class& c = find(cls);
    ++c.count;
    total_ += static_cast<double>(duration);
    c.min_duration = std::min(c.min_duration, duration);
    if (cls > 0) {
      c.bytes += static_cast<double>(bytes);
      c.min_time_per_byte =
          std::min(c.min_time_per_byte, static_cast<double>(duration) / static_cast<double>(bytes));
    }
  }
  void merge(const SciAccumulator& o) {
    total_ += o.total_;
    for (auto& oc : o.classes_) {
      Class& c = find(oc.cls);
      c.count += oc.count;
      c.min_duration = std::min(c.min_duration, oc.min_duration);
      c.bytes += oc.bytes;
      c.min_time_per_byte = std::min(c.min_time_per_byte, oc.min_time_per_byte);
    }
  }
  double best_total() const {
    double best = 0;
    for (auto& c : classes_) {
      best += c.cls == 0 ? static_cast<double>(c.count) * static_cast<double>(c.min_duration)
                         : c.bytes * c.min_time_per_byte;
    }
    return best;
  }
  double total() const { return total_; }
  double score() const {
    if (total_ <= 0) return 0.0;
    return std::clamp((total_ - best_total()) / total_, 0.0, 1.0);
  }

 private:
  struct Class {
    uint8_t cls;
    uint64_t count = 0;
    uint64_t min_duration = std::numeric_limits<uint64_t>::max();
    double bytes = 0;
    double min_time_per_byte = std::numeric_limits<double>::infinity();
  };
  Class& find(uint8_t cls) {
    for (auto& c : classes_) {
      if (c.cls == cls) return c;
    }
    classes_.push_back(Class{cls});
    return classes_.back();
  }
  double total_ = 0;
  std::vector<Class> classes_;
};

}  // namespace ezio::analysis
