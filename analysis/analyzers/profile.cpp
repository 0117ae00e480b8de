// SPDX-License-Identifier: GPL-2.0-only
#include "analysis/analyzers/profile.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
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

// Time with at least one request in flight, from the requests' begin and completion events (in
// time order on a device's location): overlapping requests count once, so it never exceeds the
// time it is measured over.
struct BusyClock {
  uint64_t in_flight = 0, since = 0, busy = 0;
  void change(uint64_t time, bool begin) {
    if (in_flight > 0 && time > since) busy += time - since;
    since = std::max(since, time);
    if (begin) {
      ++in_flight;
    } else if (in_flight > 0) {
      --in_flight;
    }
  }
};

// A device's requests: device time, shown apart from the threads' (no thread waited for all of
// it, and requests overlap).
struct DeviceStats {
  std::unordered_map<Ref, RegionStats> regions;
  std::array<BusyClock, kOpCount> busy;  // per operation kind
  BusyClock any;
  std::unordered_map<uint64_t, size_t> in_flight;  // matching id -> operation kind
};

size_t op_index(OTF2_IoOperationMode mode) {
  return mode == OTF2_IO_OPERATION_MODE_READ ? 0 : mode == OTF2_IO_OPERATION_MODE_WRITE ? 1 : 2;
}

class ProfileSink : public CallSink {
 public:
  ProfileSink(const Definitions& defs, const Filters& f, bool all)
      : CallSink(defs), filters_(f), all_(all) {}

  void begin_location(OTF2_LocationRef loc) override {
    CallSink::begin_location(loc);
    device_ = defs().is_device(loc) ? &devices_[loc] : nullptr;
    current_ = device_ ? nullptr : &threads_[loc];
  }
  void on_call(const Call& c) override {
    if (!filters_.layer_selected(c.info->layer) || !filters_.region_selected(*c.info)) return;
    if (!device_ && c.infrastructure && !all_) return infrastructure_.regions[c.region].add(c);
    (device_ ? device_->regions : current_->regions)[c.region].add(c);
  }
  void io_begin(OTF2_LocationRef loc, uint64_t time, Ref handle, OTF2_IoOperationMode mode,
                uint64_t bytes, uint64_t matching_id, const CallAttributes& a) override {
    CallSink::io_begin(loc, time, handle, mode, bytes, matching_id, a);
    if (!device_) return;
    size_t op = op_index(mode);
    device_->in_flight[matching_id] = op;
    device_->busy[op].change(time, true);
    device_->any.change(time, true);
  }
  void io_complete(OTF2_LocationRef loc, uint64_t time, Ref handle, uint64_t bytes,
                   uint64_t matching_id) override {
    CallSink::io_complete(loc, time, handle, bytes, matching_id);
    if (device_) request_done(time, matching_id);
  }
  void io_cancelled(OTF2_LocationRef loc, uint64_t time, Ref handle,
                    uint64_t matching_id) override {
    CallSink::io_cancelled(loc, time, handle, matching_id);
    if (device_) request_done(time, matching_id);
  }
  void on_location_done(OTF2_LocationRef loc, uint64_t first, uint64_t last) override {
    if (current_ && !all_ && roles().of_location(loc) == ProcessRole::kLauncher) {
      infrastructure_.runtime += last - first;
    } else if (current_) {
      current_->runtime = last - first;
    }
    if (first == 0 && last == 0) return;
    first_ = any_ ? std::min(first_, first) : first;
    last_ = any_ ? std::max(last_, last) : last;
    any_ = true;
  }

  // The recording's duration: first to last event of any location read.
  uint64_t duration() const { return last_ > first_ ? last_ - first_ : 0; }

  std::map<OTF2_LocationRef, ThreadStats> threads_;
  std::map<OTF2_LocationRef, DeviceStats> devices_;
  ThreadStats infrastructure_;  // the launcher's calls, and calls on start-up and system files

 private:
  void request_done(uint64_t time, uint64_t matching_id) {
    auto it = device_->in_flight.find(matching_id);
    if (it == device_->in_flight.end()) return;
    device_->busy[it->second].change(time, false);
    device_->any.change(time, false);
    device_->in_flight.erase(it);
  }

  const Filters& filters_;
  bool all_;
  ThreadStats* current_ = nullptr;
  DeviceStats* device_ = nullptr;
  uint64_t first_ = 0, last_ = 0;
  bool any_ = false;
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

// One row per kind of request and one for all of them: summed request time (overlapping), busy
// time (overlaps counted once) and its share of the recording, which cannot exceed 100 %.
void add_device_rows(Table& t, const std::string& section, const DeviceStats& ds, ProfileSink& sink,
                     double tick, uint64_t duration) {
  auto busy_pct = [&](uint64_t busy) {
    return duration
               ? percent_cell(100.0 * static_cast<double>(busy) / static_cast<double>(duration))
               : no_value_cell();
  };
  auto row = [&](Cell name, const RegionStats& st, uint64_t busy) {
    double request = static_cast<double>(st.inclusive) * tick;
    t.add({std::move(name), count_cell(st.count), bytes_cell(st.bytes), seconds_cell(request),
           seconds_cell(static_cast<double>(busy) * tick), busy_pct(busy),
           busy ? number_cell(request / (static_cast<double>(busy) * tick), 2) : no_value_cell(),
           seconds_cell(st.timed ? static_cast<double>(st.min) * tick : 0),
           seconds_cell(static_cast<double>(st.max) * tick),
           seconds_cell(st.timed ? request / static_cast<double>(st.timed) : 0)},
          section);
  };
  RegionStats all;
  std::vector<std::pair<Ref, const RegionStats*>> order;
  for (auto& [id, st] : ds.regions) order.emplace_back(id, &st), all.merge(st);
  std::sort(order.begin(), order.end(), [](auto& a, auto& b) { return a.first < b.first; });
  for (auto& [id, st] : order) {
    const RegionInfo& info = sink.region_info(id);
    row(text_cell(info.name), *st, ds.busy[static_cast<size_t>(info.op_guess)].busy);
  }
  if (order.size() > 1) row(text_cell("all requests"), all, ds.any.busy);
}

Table device_table(ProfileSink& sink, const Definitions& defs, double tick) {
  Table t;
  t.name = "devices";
  t.title = "Block devices (device time, not any thread's)";
  t.section_key = "device";
  t.columns = {{"request", "Request"},     {"count", "Count"},
               {"bytes", "Bytes"},         {"request_s", "Request time"},
               {"busy_s", "Busy"},         {"busy_percent", "Busy % of recording"},
               {"in_flight", "In flight"}, {"min_s", "Min"},
               {"max_s", "Max"},           {"average_s", "Average"}};
  for (auto& [loc, ds] : sink.devices_) {
    if (ds.regions.empty()) continue;
    const LocationDef* def = defs.location(loc);
    add_device_rows(t, def ? def->name : fmt::format("location {}", loc), ds, sink, tick,
                    sink.duration());
  }
  return t;
}

}  // namespace

Report run_profile(const ProfileOptions& o) {
  o.common.filters.validate();
  TraceReader reader(o.common.trace);
  ProfileSink sink(reader.defs(), o.common.filters, o.common.all);
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
  if (!sink.infrastructure_.regions.empty()) {
    add_rows(t, "Infrastructure", sink.infrastructure_, sink, tick);
    report.notes.push_back(kInfrastructureNote);
  }
  report.tables.push_back(std::move(t));
  Table devices = device_table(sink, reader.defs(), tick);
  if (!devices.rows.empty()) {
    report.tables.push_back(std::move(devices));
    report.notes.push_back(
        "Block devices: Request time sums the requests' durations (creation to completion), "
        "which overlap; Busy is the time at least one request was in flight, overlaps counted "
        "once, and Busy % its share of the recording (first to last event of any location); "
        "In flight = Request time / Busy. Device time is in no thread's % runtime.");
  }
  report.notes.push_back(
      "Duration is inclusive; % runtime is relative to the thread's first-to-last event time "
      "(summed over threads for All threads); SCI: 0 = every call ran at the best observed speed "
      "of its size class, 1 = all time was waiting; \"-\" for regions that are not I/O calls (the "
      "page cache's balance_dirty_pages is the time writers were throttled by the dirty-page "
      "limits).");
  return report;
}

}  // namespace ezio::analysis
