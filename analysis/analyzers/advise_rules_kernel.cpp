// SPDX-License-Identifier: GPL-2.0-only
// The rules about what the kernel did with the application's I/O: syncs, the page cache, dirty
// throttling, device queues, and threads slowing each other down.
#include <fmt/format.h>

#include <algorithm>

#include "analysis/analyzers/advise_rules.h"
#include "analysis/analyzers/table.h"

namespace ezio::analysis {
namespace {

uint64_t rw_count(const LayerStats& s) { return s.ops[0].count + s.ops[1].count; }

// Threads by throttled time, as "name: time in n pauses".
std::vector<std::string> throttled_threads(const Evidence& ev, size_t n = 5) {
  std::vector<const ThreadEvidence*> v;
  for (auto& t : ev.threads) {
    if (t.throttles) v.push_back(&t);
  }
  std::stable_sort(v.begin(), v.end(),
                   [](auto* a, auto* b) { return a->throttle_ticks > b->throttle_ticks; });
  std::vector<std::string> out;
  for (size_t i = 0; i < v.size() && i < n; ++i) {
    out.push_back(fmt::format("{}: {} in {} pauses", v[i]->name,
                              human_seconds(ev.seconds(v[i]->throttle_ticks)), v[i]->throttles));
  }
  return out;
}

// Service time per byte of requests completing among >= saturation_depth others, over that of
// requests completing alone; 0 when either kind is too rare to say.
double crowded_slowdown(const DeviceEvidence& d, double min_samples) {
  if (d.lone_count < min_samples || d.crowded_count < min_samples || !d.lone_ns) return 0.0;
  double lone = static_cast<double>(d.lone_ns) / static_cast<double>(d.lone_bytes);
  double crowded = static_cast<double>(d.crowded_ns) / static_cast<double>(d.crowded_bytes);
  return crowded / lone;
}

}  // namespace

void rule_sync_cost(RuleContext& c) {
  const CallClass& s = c.ev.syncs;
  if (s.count < c.t["sync_min_count"]) return;
  double time_share = share(s.ticks, c.ev.syscall_io_ticks);
  uint64_t written = c.ev.layer(app_layer(c.ev)).ops[1].bytes;
  double per_sync = static_cast<double>(written) / static_cast<double>(s.count);
  bool costly = time_share > c.t["sync_time_share"];
  bool frequent = per_sync < c.t["sync_min_bytes"];
  if (!costly && !frequent) return;
  Finding& f = c.add(time_share > 0.5 ? Level::kHigh : Level::kWarn,
                     costly ? "fsync/fdatasync take a large share of the I/O time"
                            : "Frequent syncs of little data");
  f.evidence = fmt::format("{} syncs took {} ({} of the I/O time); {} written per sync", s.count,
                           human_seconds(c.ev.seconds(s.ticks)), pct(time_share),
                           human_bytes(static_cast<uint64_t>(per_sync)));
  f.numbers = {{"syncs", s.count},
               {"sync_s", c.ev.seconds(s.ticks)},
               {"time_share", time_share},
               {"bytes_per_sync", per_sync}};
  f.where = top_files(c, [](const FileEvidence& x) { return x.syncs; });
  f.advice =
      "Sync less often (once per checkpoint, not per record), group records between syncs, "
      "or use fdatasync when the metadata need not be durable.";
  f.section = "timeline";
}

void rule_cache_read_misses(RuleContext& c) {
  if (!layer_observed(c.ev, Layer::kPageCache))
    return c.not_observed("the page-cache layer was not observed");
  auto get = [&](const char* k) { return pagecache_count(c.ev.pagecache, k); };
  uint64_t hits = get("hits"), misses = get("misses"), ra = get("readahead");
  double miss = share(misses, hits + misses);
  if (misses < c.t["read_miss_min_pages"] || miss <= c.t["read_miss_share"]) return;
  Finding& f = c.add(Level::kWarn, "Reads miss the page cache");
  f.evidence = fmt::format("{} of {} pages read ({}) were not in the cache; {} pages read ahead",
                           misses, hits + misses, pct(miss), ra);
  f.numbers = {{"hits", hits}, {"misses", misses}, {"readahead_pages", ra}};
  f.advice =
      "Reuse data while it is cached, read it in larger sequential chunks so that "
      "readahead works, or hint the kernel (posix_fadvise WILLNEED).";
  f.section = "funnel";
}

void rule_readahead_waste(RuleContext& c) {
  if (!layer_observed(c.ev, Layer::kBlock)) return;
  uint64_t app = c.ev.layer(app_layer(c.ev)).ops[0].bytes;
  // Reads a misaligned write made (read-modify-write) are not readahead.
  uint64_t dev = c.ev.layer(Layer::kBlock).ops[0].bytes;
  for (auto& d : c.ev.devices) dev -= std::min(dev, d.reads_in_writes_bytes);
  if (dev < c.t["readahead_waste_min_bytes"] + app ||
      static_cast<double>(dev) <= c.t["readahead_waste_factor"] * static_cast<double>(app))
    return;
  Finding& f = c.add(Level::kWarn,
                     "Readahead did not help: the device read more than the application asked "
                     "for");
  f.evidence = fmt::format("the application read {}, the device {} ({:.1f}×)", human_bytes(app),
                           human_bytes(dev), share(dev, app ? app : 1));
  f.numbers = {{"app_read_bytes", app}, {"device_read_bytes", dev}};
  f.advice =
      "Data was read ahead and never used: the kernel's readahead on scattered reads, or "
      "WILLNEED/madvise hints over more than is read. Use posix_fadvise(RANDOM) for random "
      "access and hint only the ranges that will be read.";
  f.section = "funnel";
}

void rule_dirty_throttling(RuleContext& c) {
  if (!c.ev.dirty_throttle_observed) {
    return c.not_observed(
        "writeback:balance_dirty_pages was not recorded (page-cache layer off, or a kernel "
        "without the tracepoint)");
  }
  double time_share = share(c.ev.dirty_throttle_ticks, c.ev.syscall_io_ticks);
  if (time_share <= c.t["dirty_throttle_share"]) return;
  const Log2Histogram& p = c.ev.dirty_pauses_ns;
  Finding& f = c.add(Level::kWarn, "Writes were throttled by the dirty-page limits");
  f.evidence = fmt::format(
      "{} pauses in balance_dirty_pages took {} ({} of the I/O time); pauses of {} on median, "
      "{} at most",
      c.ev.dirty_throttle_count, human_seconds(c.ev.seconds(c.ev.dirty_throttle_ticks)),
      pct(time_share), human_seconds(p.quantile(0.5) * 1e-9),
      human_seconds(static_cast<double>(p.max()) * 1e-9));
  f.numbers = {{"pauses", c.ev.dirty_throttle_count},
               {"throttled_s", c.ev.seconds(c.ev.dirty_throttle_ticks)},
               {"time_share", time_share},
               {"pause_p50_s", p.quantile(0.5) * 1e-9},
               {"pause_max_s", static_cast<double>(p.max()) * 1e-9}};
  f.where = throttled_threads(c.ev);
  for (auto& w : top_files(c, [](const FileEvidence& x) { return x.throttles; }))
    f.where.push_back(w);
  f.advice =
      "The application dirties pages faster than the device writes them back, and the kernel "
      "makes it wait: write less or spread the writes over time, overlap them with computation "
      "(a writer thread), or raise vm.dirty_bytes / the device's bdi max_ratio if memory allows.";
  f.section = "threads";
}

void rule_device_saturated(RuleContext& c) {
  for (auto& d : c.ev.devices) {
    uint64_t n = rw_count(d.requests);
    if (n < c.t["saturation_min_requests"] || d.service_ns == 0) continue;
    double ratio = static_cast<double>(d.queue_ns) / static_cast<double>(d.service_ns);
    double depth = d.busy_ticks ? d.depth_ticks / static_cast<double>(d.busy_ticks) : 0.0;
    double slowdown = crowded_slowdown(d, c.t["saturation_min_samples"]);
    bool queued = ratio > c.t["saturation_queue_ratio"] && depth >= c.t["saturation_depth"];
    bool slowed = slowdown > c.t["saturation_service_ratio"];
    if (!queued && !slowed) continue;
    Finding& f =
        c.add(Level::kWarn, "The device is saturated: requests wait when many are in flight");
    f.evidence = fmt::format(
        "requests waited {:.1f}× their service time in the queue; with {} or more in flight, the "
        "device took {:.1f}× longer per byte than with one; {:.1f} requests in flight on average "
        "while busy (at most {})",
        ratio, static_cast<uint64_t>(c.t["saturation_depth"]), slowdown, depth, d.max_depth);
    f.numbers = {{"queue_over_service", ratio},
                 {"crowded_slowdown", slowdown},
                 {"mean_depth", depth},
                 {"max_depth", d.max_depth}};
    f.where = {d.name};
    f.advice =
        "Fewer concurrent writers to this device, larger requests, or spread files over "
        "more devices/OSTs.";
    f.section = "devices";
  }
}

void rule_thread_interference(RuleContext& c) {
  std::vector<const ThreadEvidence*> busy;
  for (auto& t : c.ev.threads) {
    if (t.io_calls >= c.t["sci_min_calls"]) busy.push_back(&t);
  }
  if (busy.size() < 2) return;
  std::vector<std::string> slowed;
  double worst = 0;
  for (auto* t : busy) {
    bool overlaps = std::any_of(busy.begin(), busy.end(), [&](auto* o) {
      return o != t && o->first < t->last && t->first < o->last;
    });
    double s = t->sci_score();
    if (!overlaps || s <= c.t["sci_threshold"]) continue;
    slowed.push_back(fmt::format("{} (SCI {:.2f})", t->name, s));
    worst = std::max(worst, s);
  }
  if (slowed.size() < 2) return;
  Finding& f = c.add(Level::kWarn, "Threads slow each other down");
  f.evidence = fmt::format(
      "{} of {} concurrent I/O threads spend more than {:.0f} % of their I/O time waiting beyond "
      "their own best speed (worst SCI {:.2f})",
      slowed.size(), busy.size(), 100 * c.t["sci_threshold"], worst);
  f.numbers = {{"threads", slowed.size()}, {"worst_sci", worst}};
  f.where = slowed;
  f.advice =
      "Fewer threads doing I/O at once (one writer per device, or aggregators), or give "
      "them separate files/devices.";
  f.section = "threads";
}

}  // namespace ezio::analysis
