// SPDX-License-Identifier: GPL-2.0-only
#include "analysis/analyzers/latency.h"

#include <fmt/format.h>

#include <fstream>

#include "analysis/analyzers/layer_stats.h"
#include "analysis/analyzers/svg.h"
#include "analysis/analyzers/trace_run.h"
#include "common/error.h"

namespace ezio::analysis {
namespace {

class LatencySink : public CallSink {
 public:
  LatencySink(const Definitions& defs, const Filters& f, bool all)
      : CallSink(defs),
        filters_(f),
        all_(all),
        ns_per_tick_(1e9 / static_cast<double>(defs.resolution)) {}
  void on_call(const Call& c) override {
    if (!counts_as_io(c) || !filters_.layer_selected(c.info->layer) ||
        !filters_.region_selected(*c.info)) {
      return;
    }
    auto& target = c.infrastructure && !all_ ? infrastructure_ : layers_;
    target[static_cast<size_t>(c.info->layer)].add(c, ns_per_tick_);
  }
  std::array<LayerStats, kLayerCount> layers_, infrastructure_;

 private:
  const Filters& filters_;
  bool all_;
  double ns_per_tick_;
};

// Terminal bars: one line per bucket between the first and last non-empty one.
std::string draw(const std::string& title, const Log2Histogram& h) {
  int lo = -1, hi = -1;
  uint64_t peak = 0;
  for (int b = 0; b < Log2Histogram::kBuckets; ++b) {
    if (!h.bucket(b)) continue;
    if (lo < 0) lo = b;
    hi = b;
    peak = std::max(peak, h.bucket(b));
  }
  std::string s = title + "\n";
  constexpr int kWidth = 40;
  for (int b = lo; b >= 0 && b <= hi; ++b) {
    int n = static_cast<int>(static_cast<double>(h.bucket(b)) / static_cast<double>(peak) * kWidth +
                             (h.bucket(b) ? 0.999 : 0));
    s += fmt::format("  {:>9} - {:<9} |{:<{}}| {}\n", ns_label(Log2Histogram::bucket_low(b)),
                     ns_label(Log2Histogram::bucket_high(b)), std::string(n, '#'), kWidth,
                     h.bucket(b));
  }
  return s;
}

nlohmann::json buckets_json(const Log2Histogram& h) {
  auto a = nlohmann::json::array();
  for (int b = 0; b < Log2Histogram::kBuckets; ++b) {
    if (!h.bucket(b)) continue;
    a.push_back({{"min_ns", Log2Histogram::bucket_low(b)},
                 {"max_ns", Log2Histogram::bucket_high(b)},
                 {"count", h.bucket(b)}});
  }
  return a;
}

}  // namespace

Report run_latency(const LatencyOptions& o) {
  o.common.filters.validate();
  TraceReader reader(o.common.trace);
  LatencySink sink(reader.defs(), o.common.filters, o.common.all);
  Report report;
  run_trace(reader, sink, o.common.filters, report);

  Table t;
  t.name = "latency";
  t.columns = {{"layer", "Layer"}, {"operation", "Operation"}, {"count", "Count"},
               {"min_s", "Min"},   {"mean_s", "Mean"},         {"p50_s", "p50"},
               {"p99_s", "p99"},   {"max_s", "Max"},           {"buckets", "Histogram"}};
  std::vector<HistogramPanel> panels;
  for (Layer l : kAllLayers) {
    for (Op op : kAllOps) {
      const Log2Histogram& h =
          sink.layers_[static_cast<size_t>(l)].ops[static_cast<size_t>(op)].latency_ns;
      if (h.count() == 0) continue;
      std::string title = fmt::format("{} {} ({} calls)", layer_title(l), op_name(op), h.count());
      std::string buckets;
      for (int b = 0; b < Log2Histogram::kBuckets; ++b) {
        if (h.bucket(b)) buckets += fmt::format("{}{}", buckets.empty() ? "" : " ", h.bucket(b));
      }
      t.add({text_cell(std::string(layer_key(l))), text_cell(std::string(op_name(op))),
             count_cell(h.count()), seconds_cell(static_cast<double>(h.min()) * 1e-9),
             seconds_cell(h.mean() * 1e-9), seconds_cell(h.quantile(0.5) * 1e-9),
             seconds_cell(h.quantile(0.99) * 1e-9),
             seconds_cell(static_cast<double>(h.max()) * 1e-9),
             Cell{buckets_json(h), "see below", false}});
      t.footer += draw(title, h) + "\n";
      panels.push_back({title, h});
    }
  }
  report.tables.push_back(std::move(t));
  Table infra;
  infra.name = "infrastructure";
  infra.title = "Infrastructure: the launcher, start-up and system files (left out above)";
  infra.columns = {{"layer", "Layer"}, {"operation", "Operation"}, {"count", "Count"},
                   {"mean_s", "Mean"}, {"p50_s", "p50"},           {"max_s", "Max"}};
  for (Layer l : kAllLayers) {
    for (Op op : kAllOps) {
      const Log2Histogram& h =
          sink.infrastructure_[static_cast<size_t>(l)].ops[static_cast<size_t>(op)].latency_ns;
      if (h.count() == 0) continue;
      infra.add({text_cell(std::string(layer_key(l))), text_cell(std::string(op_name(op))),
                 count_cell(h.count()), seconds_cell(h.mean() * 1e-9),
                 seconds_cell(h.quantile(0.5) * 1e-9),
                 seconds_cell(static_cast<double>(h.max()) * 1e-9)});
    }
  }
  if (!infra.rows.empty()) {
    report.tables.push_back(std::move(infra));
    report.notes.push_back(kInfrastructureNote);
  }
  if (!o.svg.empty()) {
    std::ofstream out(o.svg, std::ios::binary | std::ios::trunc);
    if (!out) fail("cannot write {}: {}", o.svg, errno_text(errno));
    out << histograms_svg("I/O latency per layer and operation (log2 buckets)", panels);
    out.close();
    if (!out) fail("cannot write {}: {}", o.svg, errno_text(errno));
    report.meta["svg"] = o.svg;
  }
  return report;
}

}  // namespace ezio::analysis
