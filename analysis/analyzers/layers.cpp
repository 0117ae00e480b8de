// SPDX-License-Identifier: GPL-2.0-only
#include "analysis/analyzers/layers.h"

#include <fmt/format.h>

#include <map>
#include <unordered_map>

#include "analysis/analyzers/layer_stats.h"
#include "analysis/analyzers/trace_run.h"
#include "analysis/model/nesting.h"
#include "analysis/model/observed.h"
#include "common/schema/properties.h"

namespace ezio::analysis {
namespace {

using PerLayer = std::array<LayerStats, kLayerCount>;

class LayersSink : public CallSink {
 public:
  LayersSink(const Definitions& defs, const LayersOptions& o)
      : CallSink(defs), o_(o), ns_per_tick_(1e9 / static_cast<double>(defs.resolution)) {}

  void begin_location(OTF2_LocationRef loc) override {
    CallSink::begin_location(loc);
    if (o_.group == GroupBy::kThread) {
      const LocationDef* d = defs().location(loc);
      location_key_ = d && !d->name.empty() ? d->name : fmt::format("location {}", loc);
    } else if (o_.group == GroupBy::kProcess) {
      location_key_ = defs().process_of(loc);
      if (location_key_.empty()) location_key_ = "(unknown process)";
    } else if (o_.group == GroupBy::kHost) {
      location_key_ = defs().host_of(loc);
      if (location_key_.empty()) location_key_ = "(unknown host)";
    }
    current_ = o_.group == GroupBy::kFile ? nullptr : &groups_[location_key_];
    nesting_.begin_location();
  }
  void on_location_done(OTF2_LocationRef, uint64_t, uint64_t) override { nesting_.end_location(); }

  void on_call(const Call& c) override {
    nesting_.add(c, counts_as_io(c));
    if (!counts_as_io(c) || !o_.common.filters.layer_selected(c.info->layer) ||
        !o_.common.filters.region_selected(*c.info)) {
      return;
    }
    if (c.infrastructure && !o_.common.all) {
      infrastructure_[static_cast<size_t>(c.info->layer)].add(c, ns_per_tick_);
      return;
    }
    PerLayer* target = current_;
    if (!target) target = &groups_[file_key(c.handle)];
    (*target)[static_cast<size_t>(c.info->layer)].add(c, ns_per_tick_);
  }

  void pagecache(OTF2_LocationRef loc, uint64_t, const PageCacheSample& s) override {
    if (!o_.common.all && roles().of_location(loc) == ProcessRole::kLauncher) return;
    take_pagecache_sample(loc, s, pagecache_);
  }

  std::map<std::string, PerLayer> groups_;
  PerLayer infrastructure_;
  PageCacheThreads pagecache_;
  NestingCheck nesting_;

 private:
  const std::string& file_key(Ref handle) {
    if (handle == OTF2_UNDEFINED_IO_HANDLE) {
      static const std::string none = "(no file)";
      return none;
    }
    auto it = paths_.find(handle);
    if (it == paths_.end()) it = paths_.emplace(handle, defs().handle_path(handle)).first;
    return it->second;
  }

  const LayersOptions& o_;
  double ns_per_tick_;
  std::string location_key_;
  PerLayer* current_ = nullptr;
  std::unordered_map<Ref, std::string> paths_;
};

// What the recording's hooks could see of each operation of a layer (analysis/model/observed.h).
using Observation = std::array<Observed, kOpCount>;

Observation observation(const Definitions& defs, Layer l) {
  Observation o;
  for (Op op : kAllOps) o[static_cast<size_t>(op)] = observed(defs, l, op);
  return o;
}

const Cell kNotObserved{"not observed", "not observed", true};
const Cell kNoValue = no_value_cell();

Cell observed_count(uint64_t n, Observed seen) {
  return shown_as_not_observed(n, seen) ? kNotObserved : count_cell(n);
}
Cell observed_bytes(uint64_t n, uint64_t count, Observed seen) {
  return shown_as_not_observed(count, seen) ? kNotObserved : bytes_cell(n);
}

std::vector<Cell> layer_row(Layer l, const LayerStats& s, double tick, const Observation& seen) {
  Log2Histogram h = s.all_latency();
  auto& r = s.ops[static_cast<size_t>(Op::kRead)];
  auto& w = s.ops[static_cast<size_t>(Op::kWrite)];
  auto& other = s.ops[static_cast<size_t>(Op::kOther)];
  auto at = [&](Op op) { return seen[static_cast<size_t>(op)]; };
  std::vector<Cell> row = {text_cell(std::string(layer_title(l))),
                           observed_count(r.count, at(Op::kRead)),
                           observed_count(w.count, at(Op::kWrite)),
                           observed_count(other.count, at(Op::kOther)),
                           observed_bytes(r.bytes, r.count, at(Op::kRead)),
                           observed_bytes(w.bytes, w.count, at(Op::kWrite))};
  // Nothing of the layer observed: no time to give either.
  bool none = row[1].text == kNotObserved.text && row[2].text == kNotObserved.text &&
              row[3].text == kNotObserved.text;
  for (double v : {static_cast<double>(s.ticks()) * tick, h.mean() * 1e-9, h.quantile(0.5) * 1e-9,
                   h.quantile(0.99) * 1e-9}) {
    row.push_back(none ? kNoValue : seconds_cell(v));
  }
  return row;
}

// The page cache's row (pagecache_layer): pages and their bytes, no times.
std::vector<Cell> pagecache_row(const std::map<std::string, uint64_t>& totals,
                                const Observation& seen) {
  LayerStats s = pagecache_layer(totals);
  auto& r = s.ops[static_cast<size_t>(Op::kRead)];
  auto& w = s.ops[static_cast<size_t>(Op::kWrite)];
  auto& other = s.ops[static_cast<size_t>(Op::kOther)];
  auto at = [&](Op op) { return seen[static_cast<size_t>(op)]; };
  return {text_cell(std::string(layer_title(Layer::kPageCache))),
          observed_count(r.count, at(Op::kRead)),
          observed_count(w.count, at(Op::kWrite)),
          observed_count(other.count, at(Op::kOther)),
          observed_bytes(r.bytes, r.count, at(Op::kRead)),
          observed_bytes(w.bytes, w.count, at(Op::kWrite)),
          kNoValue,
          kNoValue,
          kNoValue,
          kNoValue};
}

// Notes on counts that are lower bounds: operations the hooks saw only some of.
void note_partial(const PerLayer& all, const Definitions& defs, Report& report) {
  for (Layer l : kAllLayers) {
    Observation seen = observation(defs, l);
    for (Op op : kAllOps) {
      uint64_t n = all[static_cast<size_t>(l)].ops[static_cast<size_t>(op)].count;
      if (seen[static_cast<size_t>(op)] != Observed::kPartial || n == 0) continue;
      report.notes.push_back(fmt::format(
          "{} {}: this kernel's hooks see only some of them (EZIOTRACE::PROBE::{}): {} is a "
          "lower bound.",
          layer_title(l), op_name(op), layer_key(l), n));
    }
  }
}

// The block requests a host's device completed between its sessions' windows, while none was
// open (merge-hosts: EZIOTRACE::OUTSIDE_WINDOWS::<dev>): in no row and in no unattributed count,
// so shown per host and device when some host has the property (0s included).
void outside_windows_table(const Definitions& defs, Report& report) {
  const std::string_view prefix = schema::kOutsideWindowsPrefix;
  Table t;
  t.name = "outside_windows";
  t.title =
      "Block requests between a host's recording sessions, while none was open (counted by the "
      "node's table, in no row above and in no unattributed count)";
  t.columns = {
      {"host", "Host"}, {"device", "Device"}, {"requests", "Requests"}, {"bytes", "Bytes"}};
  for (const auto& [host, props] : defs.host_properties) {
    for (const auto& [name, value] : props) {
      if (!name.starts_with(prefix)) continue;
      const std::string dev = name.substr(prefix.size());
      auto bytes = props.find(schema::outside_windows_bytes_property(dev));
      const uint64_t n = std::stoull(value);
      const uint64_t b = bytes == props.end() ? 0 : std::stoull(bytes->second);
      t.add({text_cell(host), text_cell(dev), count_cell(n), bytes_cell(b)});
    }
  }
  if (!t.rows.empty()) report.tables.push_back(std::move(t));
}

Table cache_table(const PerLayer& all) {
  Table t;
  t.name = "cache";
  t.title = "Application bytes reaching the block layer";
  t.columns = {{"operation", "Operation"},     {"source_layer", "Measured at"},
               {"app_bytes", "App bytes"},     {"block_bytes", "Block bytes"},
               {"absorbed_bytes", "Absorbed"}, {"percent_to_block", "% to block"}};
  for (Op op : {Op::kRead, Op::kWrite}) {
    auto bytes_at = [&](Layer l) {
      return all[static_cast<size_t>(l)].ops[static_cast<size_t>(op)].bytes;
    };
    Layer source = application_layer(bytes_at);
    uint64_t app = bytes_at(source), block = bytes_at(Layer::kBlock);
    double pct = app ? 100.0 * static_cast<double>(block) / static_cast<double>(app) : 0.0;
    t.add({text_cell(std::string(op_name(op))), text_cell(std::string(layer_key(source))),
           bytes_cell(app), bytes_cell(block), bytes_cell(app > block ? app - block : 0),
           percent_cell(pct)});
  }
  return t;
}

// The stack's containment (analysis/model/nesting.h): which layer's calls lie directly inside
// which, and the inversions, whose count the `containment` table gives (0 is the guarantee).
void nesting_tables(const NestingCheck& n, Report& report) {
  Table t;
  t.name = "nesting";
  t.title = "Calls by the layer of the I/O call directly around them";
  t.columns = {
      {"layer", "Layer"}, {"inside", "Inside"}, {"calls", "Calls"}, {"inverted", "Inverted"}};
  uint64_t checked = 0;
  for (Layer inner : kAllLayers) {
    size_t i = static_cast<size_t>(inner);
    if (n.outermost[i] > 0) {
      t.add({text_cell(std::string(layer_title(inner))), text_cell("(none)"),
             count_cell(n.outermost[i]), text_cell("no")});
    }
    checked += n.outermost[i];
    for (Layer outer : kAllLayers) {
      uint64_t calls = n.inside[static_cast<size_t>(outer)][i];
      if (calls == 0) continue;
      checked += calls;
      t.add({text_cell(std::string(layer_title(inner))), text_cell(std::string(layer_title(outer))),
             count_cell(calls), text_cell(may_nest(outer, inner) ? "no" : "yes")});
    }
  }
  report.tables.push_back(std::move(t));
  Table c;
  c.name = "containment";
  c.title = "Stack containment check";
  c.columns = {{"calls", "Calls checked"}, {"inversions", "Inversions"}};
  c.add({count_cell(checked), count_cell(n.inversions)});
  report.tables.push_back(std::move(c));
  for (const std::string& d : n.inversion_details) {
    report.notes.push_back("Inverted nesting: " + d + ".");
  }
}

std::map<std::string, uint64_t> pagecache_totals(const LayersSink& sink) {
  return pagecache_sum(sink.pagecache_);
}

Table pagecache_table(const LayersSink& sink, const Definitions& defs) {
  Table t;
  t.name = "pagecache";
  t.title = "Page cache (pages, from the recorder's counters)";
  t.columns = {{"thread", "Thread"}};
  for (std::string_view c : schema::pagecache::kCounters) {
    t.columns.push_back({std::string(c), std::string(c)});
  }
  t.columns.push_back({"hit_percent", "Hit %"});
  auto row = [&](const std::string& name, const std::map<std::string, uint64_t>& v) {
    std::vector<Cell> cells = {text_cell(name)};
    auto get = [&](std::string_view k) { return pagecache_count(v, k); };
    for (std::string_view c : schema::pagecache::kCounters) cells.push_back(count_cell(get(c)));
    uint64_t looked_up = get("hits") + get("misses");
    cells.push_back(looked_up ? percent_cell(100.0 * static_cast<double>(get("hits")) /
                                             static_cast<double>(looked_up))
                              : kNoValue);
    t.add(std::move(cells));
  };
  for (auto& [key, totals] : sink.pagecache_) {
    row(pagecache_thread_name(defs, key.first, key.second), pagecache_sum({{key, totals}}));
  }
  if (!sink.pagecache_.empty()) row("All threads", pagecache_totals(sink));
  return t;
}

}  // namespace

Report run_layers(const LayersOptions& o) {
  o.common.filters.validate();
  TraceReader reader(o.common.trace);
  LayersSink sink(reader.defs(), o);
  Report report;
  run_trace(reader, sink, o.common.filters, report);
  double tick = 1.0 / static_cast<double>(reader.defs().resolution);

  Table t;
  t.name = "layers";
  std::vector<Column> cols = {
      {"layer", "Layer"},        {"reads", "Reads"},           {"writes", "Writes"},
      {"other", "Other"},        {"read_bytes", "Read bytes"}, {"write_bytes", "Written bytes"},
      {"total_s", "Total time"}, {"mean_s", "Mean"},           {"p50_s", "p50"},
      {"p99_s", "p99"}};
  PerLayer all;
  for (auto& [key, per] : sink.groups_) {
    for (size_t i = 0; i < kLayerCount; ++i) all[i].merge(per[i]);
  }
  if (o.group == GroupBy::kNone) {
    t.columns = cols;
    for (Layer l : kAllLayers) {
      if (!o.common.filters.layer_selected(l)) continue;
      Observation seen = observation(reader.defs(), l);
      const LayerStats& s = all[static_cast<size_t>(l)];
      t.add(l == Layer::kPageCache && s.count() == 0 ? pagecache_row(pagecache_totals(sink), seen)
                                                     : layer_row(l, s, tick, seen));
    }
  } else {
    static constexpr std::array<const char*, 5> keys = {"", "file", "thread", "process", "host"};
    static constexpr std::array<const char*, 5> titles = {"", "File", "Thread", "Process", "Host"};
    size_t g = static_cast<size_t>(o.group);
    t.columns = {{keys[g], titles[g]}};
    t.columns.insert(t.columns.end(), cols.begin(), cols.end());
    for (auto& [key, per] : sink.groups_) {
      for (Layer l : kAllLayers) {
        const LayerStats& s = per[static_cast<size_t>(l)];
        if (s.count() == 0) continue;
        auto row = layer_row(l, s, tick, observation(reader.defs(), l));
        row.insert(row.begin(), text_cell(key));
        t.add(std::move(row));
      }
    }
  }
  report.tables.push_back(std::move(t));
  report.tables.push_back(cache_table(all));
  if (o.group == GroupBy::kNone) nesting_tables(sink.nesting_, report);
  if (!o.common.all) {
    Table infra;
    infra.name = "infrastructure";
    infra.title = "Infrastructure: the launcher, start-up and system files (left out above)";
    infra.columns = cols;
    for (Layer l : kAllLayers) {
      const LayerStats& s = sink.infrastructure_[static_cast<size_t>(l)];
      if (s.count() > 0) infra.add(layer_row(l, s, tick, observation(reader.defs(), l)));
    }
    if (!infra.rows.empty()) {
      report.tables.push_back(std::move(infra));
      report.notes.push_back(kInfrastructureNote);
    }
  }
  if (o.common.filters.layer_selected(Layer::kPageCache)) {
    report.tables.push_back(pagecache_table(sink, reader.defs()));
  }
  note_partial(all, reader.defs(), report);
  if (o.common.filters.layer_selected(Layer::kBlock)) outside_windows_table(reader.defs(), report);
  if (o.group == GroupBy::kNone && o.common.filters.layer_selected(Layer::kPageCache)) {
    report.notes.push_back(
        "Page cache row: pages looked up (reads), dirtied (writes) and evicted (other), bytes "
        "at 4 KiB a page; hits and misses in the page-cache table.");
  }
  if (o.common.filters.layer_selected(Layer::kBlock)) {
    report.notes.push_back(
        "Block: requests as the driver received them. An fsync's empty cache flush is one "
        "flush (other) here; /sys/block/<dev>/stat counts it as a write of 0 sectors and a "
        "flush. The archive counts those empty requests per device "
        "(EZIOTRACE::NOT_ISSUED::<dev>).");
  }
  report.notes.push_back(
      "p50/p99 come from log2 histograms (interpolated within a power-of-two bucket).");
  return report;
}

}  // namespace ezio::analysis
