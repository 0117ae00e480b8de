// SPDX-License-Identifier: GPL-2.0-only
// The report's sections other than the timeline (report_timeline.cpp).
#include <fmt/format.h>

#include <algorithm>
#include <ctime>

#include "analysis/analyzers/svg.h"
#include "analysis/analyzers/table.h"
#include "analysis/report/report_html.h"

namespace ezio::analysis {
namespace {

std::string esc(const std::string& s) { return xml_escape(s); }
std::string secs(double s) { return esc(human_seconds(s)); }
std::string pct_text(uint64_t part, uint64_t total) {
  return total ? fmt::format("{:.1f} %",
                             100.0 * static_cast<double>(part) / static_cast<double>(total))
               : "–";
}

std::string date_text(uint64_t realtime_ns) {
  if (realtime_ns == 0) return "<span class=\"na\">not recorded</span>";
  std::time_t t = static_cast<std::time_t>(realtime_ns / 1'000'000'000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

void kv(std::ostream& out, const std::string& key, const std::string& html) {
  out << "<div class=\"kv\"><b>" << esc(key) << "</b>" << html << "</div>";
}

void section_open(std::ostream& out, const char* id, const std::string& title,
                  const std::string& lead) {
  out << fmt::format("<section id=\"{}\"><h2>{}</h2><p class=\"lead\">{}</p>\n", id, title, lead);
}

}  // namespace

std::string not_observed_note(const Evidence& ev, Layer l) {
  const LayerObservation& o = ev.observed[static_cast<size_t>(l)];
  if (o.observed) return "";
  if (o.accuracy == "none") return "not observed: this kernel offers no hook for it";
  if (l == Layer::kUser) return "not observed: recorded without EZTrace (eziotrace record)";
  if (is_user_level(l)) {
    return fmt::format("not observed: recorded without EZTrace's {} module (-t {})", layer_key(l),
                       layer_key(l));
  }
  return "not observed: not recorded in this trace";
}

void write_header_section(const Evidence& ev, std::ostream& out) {
  section_open(out, "header", "Overview", "What was recorded, where, and how completely.");
  out << "<div class=\"grid\">";
  kv(out, "Command",
     ev.command.empty() ? "<span class=\"na\">not recorded</span>"
                        : "<code>" + esc(ev.command) + "</code>");
  kv(out, "Host", ev.host.empty() ? "<span class=\"na\">unknown</span>" : esc(ev.host));
  kv(out, "Kernel",
     ev.kernel.empty() ? std::string("<span class=\"na\">not recorded</span>")
                       : "Linux " + esc(ev.kernel));
  kv(out, "Start", date_text(ev.realtime_start));
  kv(out, "Duration", secs(ev.duration_s()));
  kv(out, "Events", fmt::format("{}", ev.events));
  bool complete = ev.status.empty() || ev.status == "complete";
  kv(out, "Status",
     ev.status.empty() ? "<span class=\"na\">not recorded</span>"
     : complete        ? "<span class=\"good\">complete</span>"
                       : "<span class=\"bad\">" + esc(ev.status) + "</span>");
  uint64_t lost = ev.lost_total();
  kv(out, "Lost events",
     lost ? fmt::format("<span class=\"bad\">{}</span>", lost)
          : std::string("<span class=\"good\">0</span>"));
  out << "</div>\n<table style=\"margin-top:12px\"><tr><th class=\"l\">Layer</th>"
         "<th class=\"l\">Probe</th><th class=\"l\">Accuracy</th><th>Lost events</th></tr>\n";
  for (Layer l : kAllLayers) {
    const LayerObservation& o = ev.observed[static_cast<size_t>(l)];
    auto lit = ev.lost.find(std::string(layer_key(l)));
    std::string lost_cell = lit == ev.lost.end() ? "<span class=\"na\">–</span>"
                            : lit->second
                                ? fmt::format("<span class=\"bad\">{}</span>", lit->second)
                                : std::string("0");
    std::string probe = o.observed
                            ? esc(o.probe.empty() ? "(events present)" : o.probe)
                            : "<span class=\"na\">" + esc(not_observed_note(ev, l)) + "</span>";
    out << fmt::format(
        "<tr data-probe-layer=\"{}\"><td class=\"l\">{}</td><td class=\"l probe\">{}</td>"
        "<td class=\"l\">{}</td><td>{}</td></tr>\n",
        layer_key(l), layer_title(l), probe, esc(o.accuracy.empty() ? "–" : o.accuracy), lost_cell);
  }
  out << "</table></section>\n";
}

void write_findings_section(const Advice& advice, std::ostream& out) {
  section_open(out, "findings", "Findings",
               "What to look at first: rules over the kernel's evidence, most severe first. Each "
               "links to the section holding its numbers.");
  if (advice.findings.empty()) {
    out << fmt::format("<p class=\"good\">No rule was triggered ({} rules evaluated).</p>",
                       advice.rules.size());
  }
  for (const Finding& f : advice.findings) {
    std::string level(level_name(f.level));
    out << fmt::format(
        "<div class=\"finding {0}\" data-rule=\"{1}\"><h3><span class=\"badge {0}\">"
        "{0}</span>{2}</h3><div class=\"ev\">{3}</div>",
        level, esc(f.rule), esc(f.title), esc(f.evidence));
    if (!f.where.empty()) {
      out << "<ul>";
      for (auto& w : f.where) out << "<li>" << esc(w) << "</li>";
      out << "</ul>";
    }
    out << fmt::format(
        "<div class=\"do\"><b>What to do:</b> {} <a href=\"#{}\">evidence →</a>"
        "</div></div>\n",
        esc(f.advice), f.section);
  }
  for (auto& u : advice.unobserved) {
    out << fmt::format("<p class=\"na\" data-unobserved=\"{}\">Rule {} not evaluated: {}.</p>\n",
                       esc(u.rule), esc(u.rule), esc(u.reason));
  }
  out << "</section>\n";
}

void write_latency_section(const Evidence& ev, std::ostream& out) {
  section_open(out, "latency", "Latency",
               "How long each layer's operations took (log2 buckets: a bar covers a factor of "
               "two), and the slowest calls with what they waited for down the stack.");
  out << "<table><tr><th class=\"l\">Layer</th><th class=\"l\">Operation</th><th>Count</th>"
         "<th>Mean</th><th>p50</th><th>p99</th><th>Max</th></tr>\n";
  std::vector<HistogramPanel> panels;
  for (Layer l : kAllLayers) {
    for (Op op : kAllOps) {
      const Log2Histogram& h = ev.layer(l).ops[static_cast<size_t>(op)].latency_ns;
      if (h.count() == 0) continue;
      out << fmt::format(
          "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td>"
          "<td>{}</td><td>{}</td></tr>\n",
          layer_title(l), op_name(op), h.count(), secs(h.mean() * 1e-9),
          secs(h.quantile(0.5) * 1e-9), secs(h.quantile(0.99) * 1e-9),
          secs(static_cast<double>(h.max()) * 1e-9));
      panels.push_back(
          {fmt::format("{} {} ({} calls)", layer_title(l), op_name(op), h.count()), h});
    }
  }
  out << "</table>\n";
  // One small picture per layer and operation, side by side (svg.h draws each).
  out << "<div class=\"hists\">";
  for (auto& p : panels) {
    std::string svg = histograms_svg("", {p});
    out << "<div>" << svg.substr(svg.find("<svg")) << "</div>";
  }
  out << "</div>\n<h3>Slowest calls</h3><table><tr><th>Duration</th><th class=\"l\">Call</th>"
         "<th class=\"l\">Thread</th><th class=\"l\">File</th><th>Bytes</th>"
         "<th class=\"l\">Down the stack</th></tr>\n";
  for (const SlowCall& s : ev.slowest) {
    out << fmt::format(
        "<tr><td>{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td>"
        "<td class=\"path\">{}</td><td>{}</td><td><ul class=\"path-list\">",
        secs(ev.seconds(s.ticks)), esc(s.name), esc(s.thread), esc(s.file),
        esc(human_bytes(s.bytes)));
    for (auto& p : s.path) out << "<li>" << esc(p) << "</li>";
    if (s.path.empty()) out << "<li class=\"na\">nothing recorded below it</li>";
    out << "</ul></td></tr>\n";
  }
  out << "</table></section>\n";
}

namespace {

// Time in dirty-throttling pauses (a thread's, or of the calls on a file), with the attribute
// `data` holding it in seconds for the tests; "not recorded" when the trace could not see them.
std::string throttled_text(const Evidence& ev, uint64_t pauses, uint64_t ticks,
                           std::string_view data) {
  if (!ev.dirty_throttle_observed) return "<span class=\"na\">not recorded</span>";
  if (!pauses) return "0";
  return fmt::format("<span {}=\"{}\">{} ({} pauses)</span>", data, ev.seconds(ticks),
                     secs(ev.seconds(ticks)), pauses);
}

// A file that is not the application's (file_origin()) says so: advise leaves it out.
std::string origin_note(FileOrigin o) {
  if (o == FileOrigin::kApplication) return {};
  return fmt::format(" <span class=\"na\">({}, not a finding)</span>", origin_key(o));
}

}  // namespace

void write_files_section(const Evidence& ev, std::ostream& out) {
  section_open(out, "files", "Files",
               "Each file's reads and writes as the application issued them (system calls), "
               "their order (sequential: starting where the previous access ended) and size; "
               "the block level is per device, below. Throttled: time the writes to the file "
               "waited in balance_dirty_pages because the dirty-page limits were reached.");
  out << "<table><tr><th class=\"l\">File</th><th>Reads</th><th>Writes</th><th>Read</th>"
         "<th>Written</th><th>Time</th><th>Sequential</th><th>Random</th><th>Small</th>"
         "<th>Misaligned writes</th><th>Opens</th><th>Syncs</th><th>Throttled</th>"
         "<th class=\"l\">Sizes</th></tr>\n";
  constexpr size_t kMaxRows = 60;
  size_t shown = 0;
  for (const FileEvidence& f : ev.files) {
    if (shown++ == kMaxRows) break;
    auto& o = f.syscall.ops;
    const AccessStats& a = f.access;
    std::string sizes;
    for (int b = 0; b < Log2Histogram::kBuckets; ++b) {
      if (a.sizes.bucket(b) == 0) continue;
      sizes += fmt::format("{}{}: {}", sizes.empty() ? "" : ", ",
                           human_bytes(Log2Histogram::bucket_low(b)), a.sizes.bucket(b));
    }
    out << fmt::format(
        "<tr><td class=\"path\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td class=\"l\" style=\"font-size:11.5px\">{}</td></tr>\n",
        esc(f.path) + origin_note(f.origin), o[0].count, o[1].count, esc(human_bytes(o[0].bytes)),
        esc(human_bytes(o[1].bytes)), secs(ev.seconds(f.syscall.ticks())),
        pct_text(a.sequential, a.classified()), pct_text(a.random, a.classified()),
        pct_text(a.small, a.classified()), a.misaligned_writes, f.opens, f.syncs,
        throttled_text(ev, f.throttles, f.throttle_ticks, "data-file-throttled-s"), esc(sizes));
  }
  out << "</table>";
  if (ev.files.size() > kMaxRows) {
    out << fmt::format("<p class=\"na\">{} more files (eziotrace files lists them all).</p>",
                       ev.files.size() - kMaxRows);
  }
  out << "</section>\n";
}

// How much slower per byte the device served requests among many than alone (docs/analysis.md,
// device-saturated).
std::string crowded_text(const DeviceEvidence& d) {
  if (!d.lone_count || !d.crowded_count || !d.lone_ns || !d.lone_bytes || !d.crowded_bytes)
    return "–";
  double lone = static_cast<double>(d.lone_ns) / static_cast<double>(d.lone_bytes);
  double crowded = static_cast<double>(d.crowded_ns) / static_cast<double>(d.crowded_bytes);
  return fmt::format("{:.1f}× ({} / {} requests)", crowded / lone, d.crowded_count, d.lone_count);
}

void write_devices_section(const Evidence& ev, std::ostream& out) {
  section_open(out, "devices", "Block devices",
               "Requests the devices served for this application: their order on the disk "
               "(sequential: starting at the sector where the previous one ended), how long they "
               "waited in the queue before the driver took them, and how many were in flight.");
  if (!ev.observed[static_cast<size_t>(Layer::kBlock)].observed) {
    out << "<p class=\"na\">" << esc(not_observed_note(ev, Layer::kBlock)) << "</p></section>\n";
    return;
  }
  out << "<table><tr><th class=\"l\">Device</th><th>Reads</th><th>Writes</th><th>Flushes</th>"
         "<th>Read</th><th>Written</th><th>Sequential</th><th>Random</th><th>Small</th>"
         "<th>Mean queue</th><th>Mean service</th><th>Mean depth</th><th>Max depth</th>"
         "<th>Service per byte, crowded / alone</th><th>Reads inside misaligned writes</th></tr>\n";
  for (const DeviceEvidence& d : ev.devices) {
    auto& o = d.requests.ops;
    uint64_t n = o[0].count + o[1].count;
    double depth = d.busy_ticks ? d.depth_ticks / static_cast<double>(d.busy_ticks) : 0.0;
    out << fmt::format(
        "<tr><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1f}</td><td>{}</td>"
        "<td>{}</td><td>{}</td></tr>\n",
        esc(d.name.substr(6)), o[0].count, o[1].count, o[2].count, esc(human_bytes(o[0].bytes)),
        esc(human_bytes(o[1].bytes)), pct_text(d.access.sequential, d.access.classified()),
        pct_text(d.access.random, d.access.classified()),
        pct_text(d.access.small, d.access.classified()),
        n ? secs(static_cast<double>(d.queue_ns) * 1e-9 / static_cast<double>(n)) : "–",
        n ? secs(static_cast<double>(d.service_ns) * 1e-9 / static_cast<double>(n)) : "–", depth,
        d.max_depth, esc(crowded_text(d)), d.reads_in_writes);
  }
  if (ev.devices.empty()) out << "<tr><td class=\"l na\" colspan=\"15\">no request</td></tr>";
  out << "</table></section>\n";
}

void write_threads_section(const Evidence& ev, std::ostream& out) {
  section_open(out, "threads", "Threads",
               "Each thread's I/O time (system calls) against its lifetime, and its SCI: 0 = "
               "every call ran at the thread's best observed speed for its size, 1 = all the "
               "time was waiting (other threads, the device, locks). Throttled: time the "
               "thread slept in balance_dirty_pages because the dirty-page limits were reached.");
  std::vector<const ThreadEvidence*> order;
  for (auto& t : ev.threads) order.push_back(&t);
  std::stable_sort(order.begin(), order.end(),
                   [](auto* a, auto* b) { return a->io_ticks > b->io_ticks; });
  out << "<table><tr><th class=\"l\">Thread</th><th>Lifetime</th><th>I/O time</th>"
         "<th>% in I/O</th><th>Calls</th><th>Bytes</th><th>Throttled</th>"
         "<th class=\"l\">SCI</th></tr>\n";
  for (size_t i = 0; i < order.size() && i < 64; ++i) {
    const ThreadEvidence& t = *order[i];
    uint64_t life = t.last > t.first ? t.last - t.first : 0;
    double sci = t.sci_score();
    std::string throttled = throttled_text(ev, t.throttles, t.throttle_ticks, "data-throttled-s");
    out << fmt::format(
        "<tr><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td><td class=\"l\"><svg width=\"120\" height=\"12\"><rect width=\"120\" "
        "height=\"12\" "
        "fill=\"#e8ecf2\"/><rect width=\"{:.0f}\" height=\"12\" fill=\"{}\"/></svg> {:.2f}</td>"
        "</tr>\n",
        esc(t.name), secs(ev.seconds(life)), secs(ev.seconds(t.io_ticks)),
        pct_text(t.io_ticks, life), t.io_calls, esc(human_bytes(t.bytes)), throttled, 120 * sci,
        sci > 0.5   ? "#c0392b"
        : sci > 0.2 ? "#d68910"
                    : "#1e8449",
        sci);
  }
  out << "</table></section>\n";
}

}  // namespace ezio::analysis
