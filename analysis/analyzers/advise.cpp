#include "analysis/analyzers/advise.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <iostream>

#include "analysis/analyzers/table.h"
#include "common/error.h"

namespace ezio::analysis {
namespace {

// name, default, meaning: the table of docs/analysis.md (`advise`) lists the same.
struct ThresholdDef {
  const char* name;
  double value;
};
constexpr ThresholdDef kDefaults[] = {
    {"small_request_bytes", 65536},
    {"small_share", 0.10},
    {"small_min_count", 1000},
    {"random_share", 0.20},
    {"random_min_accesses", 100},
    {"misaligned_share", 0.10},
    {"rmw_min_writes", 100},
    {"rmw_min_reads", 10},
    {"sync_min_count", 10},
    {"sync_time_share", 0.20},
    {"sync_min_bytes", 1048576},
    {"read_miss_share", 0.50},
    {"read_miss_min_pages", 256},
    {"readahead_waste_factor", 1.5},
    {"readahead_waste_min_bytes", 4194304},
    {"dirty_throttle_share", 0.05},
    {"saturation_queue_ratio", 1.0},
    {"saturation_depth", 4},
    {"saturation_min_requests", 100},
    {"saturation_service_ratio", 2.0},
    {"saturation_min_samples", 10},
    {"metadata_min_count", 1000},
    {"metadata_rate", 1000},
    {"metadata_time_share", 0.30},
    {"stdio_min_calls", 1000},
    {"stdio_passthrough_share", 0.90},
    {"reopen_min_count", 100},
    {"sci_threshold", 0.5},
    {"sci_min_calls", 100},
};

double share(double part, double total) { return total > 0 ? part / total : 0.0; }
std::string pct(double fraction) { return fmt::format("{:.1f} %", 100.0 * fraction); }

uint64_t rw_count(const LayerStats& s) { return s.ops[0].count + s.ops[1].count; }

bool observed(const Evidence& ev, Layer l) { return ev.observed[static_cast<size_t>(l)].observed; }

// The application's own layer: the syscalls, or EZTrace's calls in a user-level archive.
Layer app_layer(const Evidence& ev) {
  return observed(ev, Layer::kSyscall) ? Layer::kSyscall : Layer::kUser;
}

struct Ctx {
  const Evidence& ev;
  const Thresholds& t;
  Advice& out;
  void add(Finding f) { out.findings.push_back(std::move(f)); }
  void unobserved(const std::string& rule, const std::string& why) {
    out.unobserved.push_back({rule, why});
  }
};

void rule_lost(Ctx& c) {
  c.out.rules.push_back("lost-events");
  if (c.ev.lost_total() == 0) return;
  Finding f{"lost-events", Level::kHigh,
            "Events were lost while recording: findings are uncertain"};
  std::string parts;
  for (auto& [layer, n] : c.ev.lost) {
    if (n == 0) continue;
    parts += fmt::format("{}{} {}", parts.empty() ? "" : ", ", layer, n);
    f.numbers[layer] = n;
    f.where.push_back(layer + " layer");
  }
  f.evidence = fmt::format("lost events: {}; every count of those layers is a lower bound", parts);
  f.advice =
      "Record again with fewer layers (--layers) or a larger ring buffer, or trace a shorter run; "
      "until then read every finding below as a lower bound.";
  f.section = "header";
  c.add(std::move(f));
}

void rule_status(Ctx& c) {
  c.out.rules.push_back("incomplete-recording");
  if (c.ev.status.empty() || c.ev.status == "complete") return;
  Finding f{"incomplete-recording", Level::kWarn,
            fmt::format("The recording is {}: the trace may end early", c.ev.status)};
  f.evidence = fmt::format("EZIOTRACE::STATUS = {}", c.ev.status);
  f.numbers["status"] = c.ev.status;
  f.advice = "Let the application run to its end under eziotrace for complete figures.";
  f.section = "header";
  c.add(std::move(f));
}

// Files sorted by a count, as "path (n)".
template <class Get>
std::vector<std::string> top_files(const Evidence& ev, Get get, size_t n = 5) {
  std::vector<std::pair<uint64_t, const FileEvidence*>> v;
  for (auto& f : ev.files) {
    if (uint64_t k = get(f)) v.emplace_back(k, &f);
  }
  std::stable_sort(v.begin(), v.end(), [](auto& a, auto& b) { return a.first > b.first; });
  std::vector<std::string> out;
  for (size_t i = 0; i < v.size() && i < n; ++i) {
    out.push_back(fmt::format("{} ({})", v[i].second->path, v[i].first));
  }
  return out;
}

void rule_small(Ctx& c) {
  c.out.rules.push_back("small-requests");
  uint64_t small = 0, total = 0;
  for (auto& f : c.ev.files) small += f.access.small, total += f.access.classified();
  if (total == 0 || small < c.t["small_min_count"] || share(small, total) <= c.t["small_share"])
    return;
  uint64_t dev_small = 0, dev_total = 0;
  for (auto& d : c.ev.devices) dev_small += d.access.small, dev_total += d.access.classified();
  bool reached =
      dev_total >= c.t["small_min_count"] && share(dev_small, dev_total) > c.t["small_share"];
  Finding f{"small-requests", reached ? Level::kHigh : Level::kInfo, ""};
  std::string size = human_bytes(c.ev.small_request_bytes);
  f.evidence = fmt::format("{} of {} reads/writes ({}) are smaller than {}", small, total,
                           pct(share(small, total)), size);
  f.numbers = {{"small", small},
               {"accesses", total},
               {"device_small", dev_small},
               {"device_requests", dev_total}};
  if (!observed(c.ev, Layer::kBlock)) {
    f.title = "Many small I/O requests (the block layer was not observed)";
    f.level = Level::kWarn;
  } else if (reached) {
    f.title = "Small requests reach the device small";
    f.evidence += fmt::format("; {} of {} block requests ({}) are small too", dev_small, dev_total,
                              pct(share(dev_small, dev_total)));
  } else {
    f.title = "Small requests, absorbed by the page cache";
    f.evidence +=
        fmt::format("; the device saw {} requests, {} of them small", dev_total, dev_small);
  }
  f.where = top_files(c.ev, [](const FileEvidence& x) { return x.access.small; });
  f.advice = reached ? "Aggregate I/O into larger requests (buffer in memory, use MPI-IO "
                       "collective buffering or a larger stdio buffer); with O_DIRECT, use "
                       "requests of 1 MiB or more."
                     : "Nothing to do for the device; the system calls still cost CPU time: "
                       "larger requests would make fewer of them.";
  f.section = "files";
  c.add(std::move(f));
}

void rule_random(Ctx& c) {
  c.out.rules.push_back("random-access");
  for (auto& f : c.ev.files) {
    uint64_t n = f.access.classified();
    if (n < c.t["random_min_accesses"] || share(f.access.random, n) <= c.t["random_share"])
      continue;
    Finding x{"random-access", Level::kWarn, "Random access to a file"};
    x.evidence = fmt::format("{} of {} accesses ({}) do not start where the previous one ended",
                             f.access.random, n, pct(share(f.access.random, n)));
    x.numbers = {{"random", f.access.random}, {"accesses", n}};
    x.where = {f.path};
    x.advice =
        "Sort or batch accesses by offset, read whole blocks once, or let one rank read "
        "contiguously and redistribute (collective I/O).";
    x.section = "files";
    c.add(std::move(x));
  }
  for (auto& d : c.ev.devices) {
    uint64_t n = d.access.classified();
    if (n < c.t["random_min_accesses"] || share(d.access.random, n) <= c.t["random_share"])
      continue;
    Finding x{"random-access", Level::kWarn, "Random access at the device"};
    x.evidence = fmt::format(
        "{} of {} block requests ({}) start away from where the previous "
        "request ended",
        d.access.random, n, pct(share(d.access.random, n)));
    x.numbers = {{"random", d.access.random}, {"requests", n}};
    x.where = {d.name};
    x.advice =
        "The device seeks: access files in offset order, or keep the hot data in the page "
        "cache (more memory, smaller working set).";
    x.section = "devices";
    c.add(std::move(x));
  }
}

void rule_rmw(Ctx& c) {
  c.out.rules.push_back("read-modify-write");
  if (!observed(c.ev, Layer::kBlock)) {
    c.unobserved("read-modify-write", "the block layer was not observed");
    return;
  }
  uint64_t mis = 0, writes = 0, reads = 0;
  for (auto& f : c.ev.files) mis += f.access.misaligned_writes, writes += f.access.writes;
  for (auto& d : c.ev.devices) reads += d.reads_in_writes;
  if (mis < c.t["rmw_min_writes"] || share(mis, writes) <= c.t["misaligned_share"] ||
      reads < c.t["rmw_min_reads"])
    return;
  Finding f{"read-modify-write", Level::kHigh, "Misaligned writes turn into read-modify-write"};
  f.evidence = fmt::format(
      "{} of {} writes ({}) are not aligned to 4 KiB pages; the kernel had to read {} block "
      "requests from the device inside such writes to fill the partial pages",
      mis, writes, pct(share(mis, writes)), reads);
  f.numbers = {{"misaligned_writes", mis}, {"writes", writes}, {"device_reads_in_writes", reads}};
  f.where = top_files(c.ev, [](const FileEvidence& x) { return x.access.misaligned_writes; });
  f.advice =
      "Write whole, page-aligned blocks (offsets and sizes multiples of 4 KiB), or keep "
      "the file in the cache before updating it in place.";
  f.section = "devices";
  c.add(std::move(f));
}

void rule_sync(Ctx& c) {
  c.out.rules.push_back("sync-cost");
  const CallClass& s = c.ev.syncs;
  if (s.count < c.t["sync_min_count"]) return;
  double time_share = share(s.ticks, c.ev.syscall_io_ticks);
  uint64_t written = c.ev.layer(app_layer(c.ev)).ops[1].bytes;
  double per_sync = static_cast<double>(written) / static_cast<double>(s.count);
  bool costly = time_share > c.t["sync_time_share"];
  bool frequent = per_sync < c.t["sync_min_bytes"];
  if (!costly && !frequent) return;
  Finding f{"sync-cost", time_share > 0.5 ? Level::kHigh : Level::kWarn,
            "fsync/fdatasync take a large share of the I/O time"};
  if (!costly) f.title = "Frequent syncs of little data";
  f.evidence = fmt::format("{} syncs took {} ({} of the I/O time); {} written per sync", s.count,
                           human_seconds(c.ev.seconds(s.ticks)), pct(time_share),
                           human_bytes(static_cast<uint64_t>(per_sync)));
  f.numbers = {{"syncs", s.count},
               {"sync_s", c.ev.seconds(s.ticks)},
               {"time_share", time_share},
               {"bytes_per_sync", per_sync}};
  f.where = top_files(c.ev, [](const FileEvidence& x) { return x.syncs; });
  f.advice =
      "Sync less often (once per checkpoint, not per record), group records between syncs, "
      "or use fdatasync when the metadata need not be durable.";
  f.section = "timeline";
  c.add(std::move(f));
}

void rule_cache_reads(Ctx& c) {
  c.out.rules.push_back("cache-read-misses");
  if (!observed(c.ev, Layer::kPageCache)) {
    c.unobserved("cache-read-misses", "the page-cache layer was not observed");
  } else {
    auto get = [&](const char* k) { return pagecache_count(c.ev.pagecache, k); };
    uint64_t hits = get("hits"), misses = get("misses"), ra = get("readahead");
    double miss = share(misses, hits + misses);
    if (misses >= c.t["read_miss_min_pages"] && miss > c.t["read_miss_share"]) {
      Finding f{"cache-read-misses", Level::kWarn, "Reads miss the page cache"};
      f.evidence = fmt::format(
          "{} of {} pages read ({}) were not in the cache; {} pages read "
          "ahead",
          misses, hits + misses, pct(miss), ra);
      f.numbers = {{"hits", hits}, {"misses", misses}, {"readahead_pages", ra}};
      f.advice =
          "Reuse data while it is cached, read it in larger sequential chunks so that "
          "readahead works, or hint the kernel (posix_fadvise WILLNEED).";
      f.section = "funnel";
      c.add(std::move(f));
    }
  }
  c.out.rules.push_back("readahead-waste");
  if (!observed(c.ev, Layer::kBlock)) return;
  uint64_t app = c.ev.layer(app_layer(c.ev)).ops[0].bytes;
  // Reads a misaligned write made (read-modify-write) are not readahead.
  uint64_t dev = c.ev.layer(Layer::kBlock).ops[0].bytes;
  for (auto& d : c.ev.devices) dev -= std::min(dev, d.reads_in_writes_bytes);
  if (dev < c.t["readahead_waste_min_bytes"] + app ||
      static_cast<double>(dev) <= c.t["readahead_waste_factor"] * static_cast<double>(app))
    return;
  Finding f{"readahead-waste", Level::kWarn,
            "Readahead did not help: the device read more than "
            "the application asked for"};
  f.evidence = fmt::format("the application read {}, the device {} ({:.1f}×)", human_bytes(app),
                           human_bytes(dev), share(dev, app ? app : 1));
  f.numbers = {{"app_read_bytes", app}, {"device_read_bytes", dev}};
  f.advice =
      "Data was read ahead and never used: the kernel's readahead on scattered reads, or "
      "WILLNEED/madvise hints over more than is read. Use posix_fadvise(RANDOM) for random "
      "access and hint only the ranges that will be read.";
  f.section = "funnel";
  c.add(std::move(f));
}

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

void rule_dirty(Ctx& c) {
  c.out.rules.push_back("dirty-throttling");
  if (!c.ev.dirty_throttle_observed) {
    c.unobserved("dirty-throttling",
                 "writeback:balance_dirty_pages was not recorded (page-cache layer off, or a "
                 "kernel without the tracepoint)");
    return;
  }
  double time_share = share(c.ev.dirty_throttle_ticks, c.ev.syscall_io_ticks);
  if (time_share <= c.t["dirty_throttle_share"]) return;
  const Log2Histogram& p = c.ev.dirty_pauses_ns;
  Finding f{"dirty-throttling", Level::kWarn, "Writes were throttled by the dirty-page limits"};
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
  for (auto& w : top_files(c.ev, [](const FileEvidence& x) { return x.throttles; }))
    f.where.push_back(w);
  f.advice =
      "The application dirties pages faster than the device writes them back, and the kernel "
      "makes it wait: write less or spread the writes over time, overlap them with computation "
      "(a writer thread), or raise vm.dirty_bytes / the device's bdi max_ratio if memory allows.";
  f.section = "threads";
  c.add(std::move(f));
}

// Service time per byte of requests completing among >= saturation_depth others, over that of
// requests completing alone; 0 when either kind is too rare to say.
double crowded_slowdown(const DeviceEvidence& d, double min_samples) {
  if (d.lone_count < min_samples || d.crowded_count < min_samples || !d.lone_ns) return 0.0;
  double lone = static_cast<double>(d.lone_ns) / static_cast<double>(d.lone_bytes);
  double crowded = static_cast<double>(d.crowded_ns) / static_cast<double>(d.crowded_bytes);
  return crowded / lone;
}

void rule_saturation(Ctx& c) {
  c.out.rules.push_back("device-saturated");
  for (auto& d : c.ev.devices) {
    uint64_t n = rw_count(d.requests);
    if (n < c.t["saturation_min_requests"] || d.service_ns == 0) continue;
    double ratio = static_cast<double>(d.queue_ns) / static_cast<double>(d.service_ns);
    double depth = d.busy_ticks ? d.depth_ticks / static_cast<double>(d.busy_ticks) : 0.0;
    double slowdown = crowded_slowdown(d, c.t["saturation_min_samples"]);
    bool queued = ratio > c.t["saturation_queue_ratio"] && depth >= c.t["saturation_depth"];
    bool slowed = slowdown > c.t["saturation_service_ratio"];
    if (!queued && !slowed) continue;
    Finding f{"device-saturated", Level::kWarn,
              "The device is saturated: requests wait when many are in flight"};
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
    c.add(std::move(f));
  }
}

void rule_metadata(Ctx& c) {
  c.out.rules.push_back("metadata-storm");
  const CallClass& m = c.ev.metadata;
  double secs = c.ev.duration_s();
  double rate = secs > 0 ? static_cast<double>(m.count) / secs : 0;
  double time_share = share(m.ticks, c.ev.syscall_io_ticks);
  if (m.count < c.t["metadata_min_count"] ||
      (rate <= c.t["metadata_rate"] && time_share <= c.t["metadata_time_share"]))
    return;
  Finding f{"metadata-storm", Level::kWarn, "Metadata storm: many opens/closes/stats"};
  f.evidence = fmt::format("{} metadata calls ({:.0f} per second) took {} ({} of the I/O time)",
                           m.count, rate, human_seconds(c.ev.seconds(m.ticks)), pct(time_share));
  f.numbers = {{"calls", m.count}, {"per_second", rate}, {"time_share", time_share}};
  f.where = top_files(c.ev, [](const FileEvidence& x) { return x.opens; });
  f.advice =
      "Open files once and keep them open, cache stat results, avoid one file per "
      "record/rank; on parallel file systems metadata calls are served by one server.";
  f.section = "files";
  c.add(std::move(f));
}

void rule_stdio(Ctx& c) {
  c.out.rules.push_back("useless-buffering");
  if (!observed(c.ev, Layer::kUser)) {
    c.unobserved("useless-buffering", "user-level calls were not recorded (eziotrace record)");
    return;
  }
  uint64_t n = c.ev.user_stdio_calls, pass = c.ev.user_stdio_passthrough;
  if (n < c.t["stdio_min_calls"] || share(pass, n) <= c.t["stdio_passthrough_share"]) return;
  Finding f{"useless-buffering", Level::kWarn,
            "User-level buffering does nothing: each buffered call makes its own system call"};
  f.evidence = fmt::format("{} of {} fwrite/fread-like calls ({}) made a read/write system call",
                           pass, n, pct(share(pass, n)));
  f.numbers = {{"buffered_calls", n}, {"with_syscall", pass}};
  for (auto& [path, k] : c.ev.user_stdio_files) f.where.push_back(fmt::format("{} ({})", path, k));
  f.advice =
      "The stdio buffer is smaller than the records: enlarge it (setvbuf) or call "
      "write() directly with the records gathered.";
  f.section = "funnel";
  c.add(std::move(f));
}

void rule_reopen(Ctx& c) {
  c.out.rules.push_back("reopened-files");
  for (auto& f : c.ev.files) {
    if (f.opens < c.t["reopen_min_count"]) continue;
    Finding x{"reopened-files", Level::kWarn, "The same file is opened again and again"};
    x.evidence = fmt::format("opened {} times", f.opens);
    x.numbers = {{"opens", f.opens}};
    x.where = {f.path};
    x.advice = "Keep the file open across iterations.";
    x.section = "files";
    c.add(std::move(x));
  }
}

void rule_sci(Ctx& c) {
  c.out.rules.push_back("thread-interference");
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
  Finding f{"thread-interference", Level::kWarn, "Threads slow each other down"};
  f.evidence = fmt::format(
      "{} of {} concurrent I/O threads spend more than {:.0f} % of their "
      "I/O time waiting beyond their own best speed (worst SCI {:.2f})",
      slowed.size(), busy.size(), 100 * c.t["sci_threshold"], worst);
  f.numbers = {{"threads", slowed.size()}, {"worst_sci", worst}};
  f.where = slowed;
  f.advice =
      "Fewer threads doing I/O at once (one writer per device, or aggregators), or give "
      "them separate files/devices.";
  f.section = "threads";
  c.add(std::move(f));
}

}  // namespace

Thresholds::Thresholds() {
  for (auto& d : kDefaults) values[d.name] = d.value;
}

double Thresholds::operator[](const std::string& name) const { return values.at(name); }

void Thresholds::load(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail("cannot read {}: {}", path, errno_text(errno));
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object()) fail("{}: not a JSON object of thresholds", path);
  for (auto& [k, v] : j.items()) {
    if (!values.contains(k))
      fail("{}: unknown threshold '{}' (docs/analysis.md lists them)", path, k);
    if (!v.is_number()) fail("{}: threshold '{}' is not a number", path, k);
    values[k] = v.get<double>();
  }
}

std::string_view level_name(Level l) {
  static constexpr std::string_view names[] = {"high", "warn", "info"};
  return names[static_cast<size_t>(l)];
}

EvidenceOptions evidence_options(const Thresholds& t) {
  EvidenceOptions eo;
  eo.small_request_bytes = static_cast<uint64_t>(t["small_request_bytes"]);
  eo.crowded_depth = static_cast<uint64_t>(t["saturation_depth"]);
  return eo;
}

Advice advise(const Evidence& ev, const Thresholds& t) {
  Advice a;
  Ctx c{ev, t, a};
  for (auto rule :
       {rule_lost, rule_status, rule_small, rule_random, rule_rmw, rule_sync, rule_cache_reads,
        rule_dirty, rule_saturation, rule_metadata, rule_stdio, rule_reopen, rule_sci}) {
    rule(c);
  }
  std::stable_sort(a.findings.begin(), a.findings.end(),
                   [](auto& x, auto& y) { return x.level < y.level; });
  return a;
}

nlohmann::json advice_json(const Advice& a, const Evidence& ev, const Thresholds& t) {
  nlohmann::json j;
  j["meta"] = {
      {"trace", ev.trace}, {"events", ev.events}, {"lost_events", ev.lost}, {"status", ev.status}};
  if (!ev.kernel.empty()) j["meta"]["kernel"] = ev.kernel;
  j["findings"] = nlohmann::json::array();
  for (auto& f : a.findings) {
    j["findings"].push_back({{"rule", f.rule},
                             {"level", level_name(f.level)},
                             {"title", f.title},
                             {"evidence", f.evidence},
                             {"numbers", f.numbers},
                             {"where", f.where},
                             {"advice", f.advice},
                             {"section", f.section}});
  }
  j["not_observed"] = nlohmann::json::array();
  for (auto& u : a.unobserved)
    j["not_observed"].push_back({{"rule", u.rule}, {"reason", u.reason}});
  j["rules"] = a.rules;
  j["thresholds"] = t.values;
  return j;
}

namespace {

void print_text(const Advice& a, const Evidence& ev, std::ostream& out) {
  if (a.findings.empty())
    out << "No findings: no rule was triggered (" << a.rules.size() << " rules).\n";
  for (auto& f : a.findings) {
    out << fmt::format("[{}] {}\n  evidence: {}\n", level_name(f.level), f.title, f.evidence);
    for (auto& w : f.where) out << "  where:    " << w << "\n";
    out << "  do:       " << f.advice << "\n\n";
  }
  for (auto& u : a.unobserved) out << fmt::format("not observed: {}: {}\n", u.rule, u.reason);
  if (ev.lost_total() > 0) out << "Events were lost: every finding is a lower bound.\n";
}

}  // namespace

void advise_command(const AdviseOptions& o) {
  Thresholds t;
  if (!o.config.empty()) t.load(o.config);
  Evidence ev = collect_evidence(o.trace, evidence_options(t));
  Advice a = advise(ev, t);
  if (o.json) {
    std::cout << advice_json(a, ev, t).dump(2) << "\n";
  } else {
    print_text(a, ev, std::cout);
  }
  std::cout.flush();
}

}  // namespace ezio::analysis
