// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Fixed-size log2 histogram: bucket 0 holds 0 and 1, bucket k holds [2^k, 2^(k+1)). Percentiles
// are interpolated linearly inside their bucket and clamped to the observed min/max, so they are
// exact when a bucket holds one distinct value and within a factor of 2 otherwise
// (docs/analysis.md).
#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <vector>

namespace ezio::analysis {

class Log2Histogram {
 public:
  static constexpr int kBuckets = 64;

  static int bucket_of(uint64_t v) { return v < 2 ? 0 : 63 - std::countl_zero(v); }
  static uint64_t bucket_low(int b) { return b == 0 ? 0 : uint64_t{1} << b; }
  // Exclusive upper bound, saturated for the last bucket.
  static uint64_t bucket_high(int b) {
    return b >= 63 ? std::numeric_limits<uint64_t>::max() : uint64_t{1} << (b + 1);
  }

  void add(uint64_t v) {
    ++slot(bucket_of(v));
    ++count_;
    sum_ += static_cast<double>(v);
    if (v < min_) min_ = v;
    if (v > max_) max_ = v;
  }
  void merge(const Log2Histogram& o) {
    for (size_t i = 0; i < o.counts_.size(); ++i) {
      if (o.counts_[i]) slot(o.first_ + static_cast<int>(i)) += o.counts_[i];
    }
    count_ += o.count_;
    sum_ += o.sum_;
    if (o.min_ < min_) min_ = o.min_;
    if (o.max_ > max_) max_ = o.max_;
  }

  uint64_t count() const { return count_; }
  double sum() const { return sum_; }
  double mean() const { return count_ ? sum_ / static_cast<double>(count_) : 0.0; }
  uint64_t min() const { return count_ ? min_ : 0; }
  uint64_t max() const { return max_; }
  uint64_t bucket(int b) const {
    return b >= first_ && b < first_ + static_cast<int>(counts_.size()) ? counts_[b - first_] : 0;
  }
  // q in [0,1]; 0 for an empty histogram.
  double quantile(double q) const {
    if (count_ == 0) return 0.0;
    double rank = q * static_cast<double>(count_);
    uint64_t seen = 0;
    for (int b = first_; b < first_ + static_cast<int>(counts_.size()); ++b) {
      uint64_t n = bucket(b);
      if (n == 0) continue;
      if (static_cast<double>(seen + n) >= rank) {
        double lo = static_cast<double>(std::max(bucket_low(b), min_));
        double hi = static_cast<double>(std::min(bucket_high(b), max_));
        if (hi < lo) hi = lo;
        double frac = (rank - static_cast<double>(seen)) / static_cast<double>(n);
        return lo + (hi - lo) * frac;
      }
      seen += n;
    }
    return static_cast<double>(max_);
  }

 private:
  uint64_t& slot(int b) {
    if (counts_.empty()) {
      first_ = b;
      counts_.resize(1);
    } else if (b < first_) {
      counts_.insert(counts_.begin(), static_cast<size_t>(first_ - b), 0);
      first_ = b;
    } else if (b >= first_ + static_cast<int>(counts_.size())) {
      counts_.resize(static_cast<size_t>(b - first_ + 1));
    }
    return counts_[static_cast<size_t>(b - first_)];
  }

  std::vector<uint64_t> counts_;  // buckets first_ .. first_ + size - 1
  int first_ = 0;
  uint64_t count_ = 0;
  double sum_ = 0;
  uint64_t min_ = std::numeric_limits<uint64_t>::max();
  uint64_t max_ = 0;
};

}  // namespace ezio::analysis
