// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The always-on metrics' BPF programs (bpf/metrics.bpf.c), loaded and attached for the lifetime
// of this object, for every process of the node; their table read by the collector. Root only.
#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "metrics.h"

struct metrics;

namespace ezio::recorder::metrics {

struct Series {
  ezio_metric_key key{};
  ezio_metric_value value{};
};

class MetricsPrograms {
 public:
  // max_series: the table's size (bounded cardinality: what does not fit is counted in
  // overflow()). Fails (ezio::Error) when the programs do not load or attach.
  explicit MetricsPrograms(uint32_t max_series);
  ~MetricsPrograms();
  MetricsPrograms(const MetricsPrograms&) = delete;
  MetricsPrograms& operator=(const MetricsPrograms&) = delete;

  // Every series in the table now (the programs go on counting meanwhile: each one read whole,
  // as its counters were at that instant, near enough).
  std::vector<Series> read() const;
  // Removes series (of a cgroup that ended, reported for the last time).
  void forget(const std::vector<ezio_metric_key>& keys) const;
  // Events that found no room in the table, per enum ezio_metric_op.
  std::array<uint64_t, EZIO_M_OP_COUNT> overflow() const;
  uint32_t max_series() const { return max_series_; }
  // The programs attached (the tests count them).
  size_t attached_programs() const;

 private:
  struct Destroy {
    void operator()(::metrics* skel) const;
  };
  std::unique_ptr<::metrics, Destroy> skel_;
  uint32_t max_series_;
};

}  // namespace ezio::recorder::metrics
