// SPDX-License-Identifier: GPL-2.0-only
// The rules about how the application accesses its files: request sizes, order, alignment,
// metadata calls, buffering and reopening.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "analysis/analyzers/advise_rules.h"
#include "analysis/analyzers/table.h"

namespace ezio::analysis {

void rule_small_requests(RuleContext& c) {
  uint64_t small = 0, total = 0;
  for (auto* f : c.files) small += f->access.small, total += f->access.classified();
  if (total == 0 || small < c.t["small_min_count"] || share(small, total) <= c.t["small_share"])
    return;
  uint64_t dev_small = 0, dev_total = 0;
  for (auto& d : c.ev.devices) dev_small += d.access.small, dev_total += d.access.classified();
  bool reached =
      dev_total >= c.t["small_min_count"] && share(dev_small, dev_total) > c.t["small_share"];
  Finding& f = c.add(reached ? Level::kHigh : Level::kInfo, "");
  std::string size = human_bytes(c.ev.small_request_bytes);
  f.evidence = fmt::format("{} of {} reads/writes ({}) are smaller than {}", small, total,
                           pct(share(small, total)), size);
  f.numbers = {{"small", small},
               {"accesses", total},
               {"device_small", dev_small},
               {"device_requests", dev_total}};
  if (!layer_observed(c.ev, Layer::kBlock)) {
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
  f.where = top_files(c, [](const FileEvidence& x) { return x.access.small; });
  f.advice = reached ? "Aggregate I/O into larger requests (buffer in memory, use MPI-IO "
                       "collective buffering or a larger stdio buffer); with O_DIRECT, use "
                       "requests of 1 MiB or more."
                     : "Nothing to do for the device; the system calls still cost CPU time: "
                       "larger requests would make fewer of them.";
  f.section = "files";
}

namespace {

bool mostly_random(const AccessStats& a, const Thresholds& t) {
  uint64_t n = a.classified();
  return n >= t["random_min_accesses"] && share(a.random, n) > t["random_share"];
}

}  // namespace

void rule_random_access(RuleContext& c) {
  for (auto* file : c.files) {
    const FileEvidence& f = *file;
    if (!mostly_random(f.access, c.t)) continue;
    uint64_t n = f.access.classified();
    Finding& x = c.add(Level::kWarn, "Random access to a file");
    x.evidence = fmt::format("{} of {} accesses ({}) do not start where the previous one ended",
                             f.access.random, n, pct(share(f.access.random, n)));
    x.numbers = {{"random", f.access.random}, {"accesses", n}};
    x.where = {f.path};
    x.advice =
        "Sort or batch accesses by offset, read whole blocks once, or let one rank read "
        "contiguously and redistribute (collective I/O).";
    x.section = "files";
  }
  for (auto& d : c.ev.devices) {
    if (!mostly_random(d.access, c.t)) continue;
    uint64_t n = d.access.classified();
    Finding& x = c.add(Level::kWarn, "Random access at the device");
    x.evidence =
        fmt::format("{} of {} block requests ({}) start away from where the previous request ended",
                    d.access.random, n, pct(share(d.access.random, n)));
    x.numbers = {{"random", d.access.random}, {"requests", n}};
    x.where = {d.name};
    x.advice =
        "The device seeks: access files in offset order, or keep the hot data in the page "
        "cache (more memory, smaller working set).";
    x.section = "devices";
  }
}

void rule_read_modify_write(RuleContext& c) {
  if (!layer_observed(c.ev, Layer::kBlock))
    return c.not_observed("the block layer was not observed");
  uint64_t mis = 0, writes = 0, reads = 0;
  for (auto* f : c.files) mis += f->access.misaligned_writes, writes += f->access.writes;
  for (auto& d : c.ev.devices) reads += d.reads_in_writes;
  if (mis < c.t["rmw_min_writes"] || share(mis, writes) <= c.t["misaligned_share"] ||
      reads < c.t["rmw_min_reads"])
    return;
  Finding& f = c.add(Level::kHigh, "Misaligned writes turn into read-modify-write");
  f.evidence = fmt::format(
      "{} of {} writes ({}) are not aligned to 4 KiB pages; the kernel had to read {} block "
      "requests from the device inside such writes to fill the partial pages",
      mis, writes, pct(share(mis, writes)), reads);
  f.numbers = {{"misaligned_writes", mis}, {"writes", writes}, {"device_reads_in_writes", reads}};
  f.where = top_files(c, [](const FileEvidence& x) { return x.access.misaligned_writes; });
  f.advice =
      "Write whole, page-aligned blocks (offsets and sizes multiples of 4 KiB), or keep "
      "the file in the cache before updating it in place.";
  f.section = "devices";
}

void rule_metadata_storm(RuleContext& c) {
  const CallClass& m = c.ev.metadata;
  double secs = c.ev.duration_s();
  double rate = secs > 0 ? static_cast<double>(m.count) / secs : 0;
  double time_share = share(m.ticks, c.ev.syscall_io_ticks);
  if (m.count < c.t["metadata_min_count"] ||
      (rate <= c.t["metadata_rate"] && time_share <= c.t["metadata_time_share"]))
    return;
  Finding& f = c.add(Level::kWarn, "Metadata storm: many opens/closes/stats");
  f.evidence = fmt::format("{} metadata calls ({:.0f} per second) took {} ({} of the I/O time)",
                           m.count, rate, human_seconds(c.ev.seconds(m.ticks)), pct(time_share));
  f.numbers = {{"calls", m.count}, {"per_second", rate}, {"time_share", time_share}};
  f.where = top_files(c, [](const FileEvidence& x) { return x.opens; });
  f.advice =
      "Open files once and keep them open, cache stat results, avoid one file per "
      "record/rank; on parallel file systems metadata calls are served by one server.";
  f.section = "files";
}

void rule_useless_buffering(RuleContext& c) {
  if (!layer_observed(c.ev, Layer::kUser))
    return c.not_observed("user-level calls were not recorded (eziotrace record)");
  // The calls on files that are not the application's (stdout to a terminal) are left out.
  uint64_t n = c.ev.user_stdio_calls, pass = c.ev.user_stdio_passthrough;
  for (auto& f : c.ev.files) {
    if (f.origin == FileOrigin::kApplication) continue;
    n -= std::min(n, f.stdio_calls);
    pass -= std::min(pass, f.stdio_passthrough);
  }
  if (n < c.t["stdio_min_calls"] || share(pass, n) <= c.t["stdio_passthrough_share"]) return;
  Finding& f = c.add(Level::kWarn,
                     "User-level buffering does nothing: each buffered call makes its own system "
                     "call");
  f.evidence = fmt::format("{} of {} fwrite/fread-like calls ({}) made a read/write system call",
                           pass, n, pct(share(pass, n)));
  f.numbers = {{"buffered_calls", n}, {"with_syscall", pass}};
  f.where = top_files(
      c, [](const FileEvidence& x) { return x.stdio_passthrough; }, SIZE_MAX);
  f.advice =
      "The stdio buffer is smaller than the records: enlarge it (setvbuf) or call "
      "write() directly with the records gathered.";
  f.section = "funnel";
}

void rule_reopened_files(RuleContext& c) {
  for (auto* f : c.files) {
    if (f->opens < c.t["reopen_min_count"]) continue;
    Finding& x = c.add(Level::kWarn, "The same file is opened again and again");
    x.evidence = fmt::format("opened {} times", f->opens);
    x.numbers = {{"opens", f->opens}};
    x.where = {f->path};
    x.advice = "Keep the file open across iterations.";
    x.section = "files";
  }
}

}  // namespace ezio::analysis
