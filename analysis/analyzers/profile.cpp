#include "analysis/analyzers/profile.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <unordered_map>

#include "analysis/analyzers/layer_stats.h"
#include "analysis/analyzers/sci.h"
#include "analysis/analyzers/trace_run.h"

namespace ezio::analysis {
namespace {

struct RegionStats {
  uint64_t count = 0;
  uint64_t timed = 0;  // calls with a duration
  uint64_t inclusive = 0, exclusive = 0;
  uint64_t min = std::numeric_limits<uint64_t>::max(), max = 0;
  uint64_t bytes = 0;
  // SCI compares I/O calls of one size class; a region that is not an I/O call (a computation
  // region, a writer's dirty-throttling pause in the page cache) has none.
  bool io = false;
  SciAccumulator sci;

  void add(const Call& c) {
    uint64_t d = c.duration();
    ++count;
    io = counts_as_io(c);
    if (c.has_bytes) bytes += c.bytes;
    if (c.point) return;  // counted, but its duration is unknown, not zero
    ++timed;
    inclusive += d;
    exclusive += c.exclusive();
    min = std::min(min, d);
    max = std::max(max, d);
    sci.add(d, c.has_bytes, c.bytes);
  }
  void merge(const RegionStats& o) {
    count += o.count;
    timed += o.timed;
    inclusive += o.inclusive;
    exclusive += o.exclusive;
    min = std::min(min, o.min);
    max = std::max(max, o.max);
    bytes += o.bytes;
    io = io || o.io;
    sci.merge(o.sci);
  }
};

struct ThreadStats {
  uint64_t runtime = 0;
  std::unordered_map<Ref, RegionStats> regions;
};

class ProfileSink : public CallSink {
 public:
  ProfileSink(const Definitions& defs, const Filters& f) : CallSink(defs), filters_(f) {}

  void begin_location(OTF2_LocationRef loc) override {
    CallSink::begin_location(loc);
    current_ = &threads_[loc];
  }
  void on_call(const Call& c) override {
    if (!filters_.layer_selected(c.info->layer) || !filters_.region_selected(*c.info)) return;
    current_->regions[c.region].add(c);
  }
  void on_location_done(OTF2_LocationRef, uint64_t first, uint64_t last) override {
    current_->runtime = last - first;
  }

  std::map<OTF2_LocationRef, ThreadStats> threads_;

 private:
  const Filters& filters_;
  ThreadStats* current_ = nullptr;
};

void add_rows(Table& t, const std::string& section, const ThreadStats& ts, ProfileSink& sink,
              double tick) {
  std::vector<std::pair<Ref, const RegionStats*>> order;
  for (auto& [id, st] : ts.regions) order.emplace_back(id, &st);
  std::sort(order.begin(), order.end(), [&](auto& a, auto& b) {
    if (a.second->inclusive != b.second->inclusive)
      return a.second->inclusive > b.second->inclusive;
    return sink.region_info(a.first).canonical < sink.region_info(b.first).canonical;
  });
  for (auto& [id, st] : order) {
    const RegionInfo& info = sink.region_info(id);
    double incl = static_cast<double>(st->inclusive) * tick;
    double pct = ts.runtime
                     ? 100.0 * static_cast<double>(st->inclusive) / static_cast<double>(ts.runtime)
                     : 0.0;
    t.add({text_cell(info.name), text_cell(std::string(layer_key(info.layer))), seconds_cell(incl),
           seconds_cell(static_cast<double>(st->exclusive) * tick), percent_cell(pct),
           count_cell(st->count), seconds_cell(st->timed ? static_cast<double>(st->min) * tick : 0),
           seconds_cell(static_cast<double>(st->max) * tick),
           seconds_cell(st->timed ? incl / static_cast<double>(st->timed) : 0),
           bytes_cell(st->bytes), st->io ? number_cell(st->sci.score(), 4) : no_value_cell()},
          section);
  }
}

}  // namespace

Report run_profile(const ProfileOptions& o) {
  o.common.filters.validate();
  TraceReader reader(o.common.trace);
  ProfileSink sink(reader.defs(), o.common.filters);
  Report report;
  run_trace(reader, sink, o.common.filters, report);

  double tick = 1.0 / static_cast<double>(reader.defs().resolution);
  Table t;
  t.name = "profile";
  t.section_key = "thread";
  t.section_prefix = "Thread ";
  t.unprefixed_section = "All threads";
  t.columns = {{"function", "Function"},
               {"layer", "Layer"},
               {"inclusive_s", "Duration"},
               {"exclusive_s", "Exclusive"},
               {"percent_runtime", "% runtime"},
               {"count", "Count"},
               {"min_s", "Min"},
               {"max_s", "Max"},
               {"average_s", "Average"},
               {"bytes", "Bytes"},
               {"sci", "SCI"}};
  ThreadStats total;
  for (auto& [loc, ts] : sink.threads_) {
    // Locations without calls (page-cache metric locations, filtered out) have no runtime to share.
    if (ts.regions.empty()) continue;
    total.runtime += ts.runtime;
    for (auto& [id, st] : ts.regions) total.regions[id].merge(st);
    if (o.total_only) continue;
    const LocationDef* def = reader.defs().location(loc);
    std::string name = def && !def->name.empty() ? def->name : fmt::format("location {}", loc);
    add_rows(t, name, ts, sink, tick);
  }
  add_rows(t, "All threads", total, sink, tick);
  report.tables.push_back(std::move(t));
  report.notes.push_back(
      "Duration is inclusive; % runtime is relative to the thread's first-to-last event time "
      "(summed over threads for All threads); SCI: 0 = every call ran at the best observed speed "
      "of its size class, 1 = all time was waiting; \"-\" for regions that are not I/O calls (the "
      "page cache's balance_dirty_pages is the time writers were throttled by the dirty-page "
      "limits).");
  return report;
}

}  // namespace ezio::analysis
