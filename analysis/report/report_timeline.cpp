// SPDX-License-Identifier: GPL-2.0-only
// The report's drawings: the layer funnel and the timeline (inline SVG).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "analysis/analyzers/svg.h"
#include "analysis/analyzers/table.h"
#include "analysis/report/report_html.h"

namespace ezio::analysis {
namespace {

constexpr const char* kRead = "#2f6fb0";
constexpr const char* kWrite = "#e07b24";
constexpr std::array<const char*, kLayerCount> kLayerColour = {
    "#b8860b", "#d35400", "#6c5ce7", "#2f6fb0", "#16a085", "#27ae60", "#8e44ad", "#c0392b"};

std::string esc(const std::string& s) { return xml_escape(s); }

uint64_t pc(const Evidence& ev, const char* k) { return pagecache_count(ev.pagecache, k); }

// Two bars (read, write bytes) scaled to the largest byte count of any layer.
std::string bars(uint64_t rb, uint64_t wb, uint64_t max) {
  constexpr double kW = 300;
  auto w = [&](uint64_t b) {
    return max ? std::max(b ? 1.0 : 0.0, kW * static_cast<double>(b) / static_cast<double>(max))
               : 0.0;
  };
  return fmt::format(
      "<svg width=\"{0}\" height=\"26\"><rect y=\"1\" width=\"{1:.1f}\" height=\"11\" fill=\"{2}\""
      "/><rect y=\"14\" width=\"{3:.1f}\" height=\"11\" fill=\"{4}\"/></svg>",
      kW, w(rb), kRead, w(wb), kWrite);
}

// The layer's numbers as `eziotrace layers` gives them: the page cache as pages, and
// "not observed" for a 0 that no hook could have made larger.
struct FunnelCells {
  LayerStats stats;
  std::array<std::string, kOpCount> counts;
  std::array<std::string, 2> bytes;  // read, written (as data attributes)
  std::array<std::string, 2> shown_bytes;
};

FunnelCells funnel_cells(const Evidence& ev, Layer l) {
  FunnelCells c;
  c.stats = l == Layer::kPageCache && ev.layer(l).count() == 0 ? pagecache_layer(ev.pagecache)
                                                               : ev.layer(l);
  const auto& seen = ev.op_observed[static_cast<size_t>(l)];
  for (size_t op = 0; op < kOpCount; ++op) {
    const OpStats& s = c.stats.ops[op];
    bool na = shown_as_not_observed(s.count, seen[op]);
    c.counts[op] = na ? "not observed" : fmt::format("{}", s.count);
    if (op < 2) {
      c.bytes[op] = na ? "not observed" : fmt::format("{}", s.bytes);
      c.shown_bytes[op] = na ? "<span class=\"na\">not observed</span>" : esc(human_bytes(s.bytes));
    }
  }
  return c;
}

void funnel_row(const Evidence& ev, Layer l, uint64_t max, std::ostream& out) {
  std::string note = not_observed_note(ev, l);
  if (!note.empty()) {
    out << fmt::format(
        "<tr data-layer=\"{}\" data-observed=\"false\"><td class=\"l\"><b>{}</b>"
        "</td><td class=\"l na\" colspan=\"7\">{}</td></tr>\n",
        layer_key(l), layer_title(l), esc(note));
    return;
  }
  FunnelCells c = funnel_cells(ev, l);
  const LayerStats& s = c.stats;
  std::string time = l == Layer::kPageCache && ev.layer(l).count() == 0
                         ? std::string("–")
                         : esc(human_seconds(ev.seconds(s.ticks())));
  out << fmt::format(
      "<tr data-layer=\"{0}\" data-observed=\"true\" data-reads=\"{1}\" data-writes=\"{2}\" "
      "data-other=\"{3}\" data-read-bytes=\"{4}\" data-write-bytes=\"{5}\"><td class=\"l\">"
      "<b>{6}</b></td><td class=\"reads\">{1}</td><td class=\"writes\">{2}</td>"
      "<td class=\"other\">{3}</td><td title=\"{4} bytes\">{7}</td><td title=\"{5} bytes\">{8}</td>"
      "<td>{9}</td><td class=\"l\">{10}</td></tr>\n",
      layer_key(l), c.counts[0], c.counts[1], c.counts[2], c.bytes[0], c.bytes[1], layer_title(l),
      c.shown_bytes[0], c.shown_bytes[1], time, bars(s.ops[0].bytes, s.ops[1].bytes, max));
  if (l != Layer::kPageCache) return;
  out << fmt::format(
      "<tr class=\"pc\" data-pagecache-hits=\"{}\" data-pagecache-misses=\"{}\"><td></td>"
      "<td class=\"l\" colspan=\"7\" style=\"font-size:12.5px\">pages: {} hits, {} misses, {} read "
      "ahead, {} dirtied by writes, {} evicted, {} mmap faults</td></tr>\n",
      pc(ev, "hits"), pc(ev, "misses"), pc(ev, "hits"), pc(ev, "misses"), pc(ev, "readahead"),
      pc(ev, "dirtied"), pc(ev, "evicted"), pc(ev, "faults"));
}

// The bytes asked at each observed layer, from the top of the stack (HDF5 when recorded) down to
// the device: one line per direction.
void stack_path(const Evidence& ev, std::ostream& out) {
  out << "<p class=\"lead\" id=\"stack-path\" style=\"margin-top:10px\">";
  for (size_t op = 0; op < 2; ++op) {
    std::string path;
    for (Layer l : kAllLayers) {
      if (l == Layer::kPageCache || !ev.observed[static_cast<size_t>(l)].observed) continue;
      if (!path.empty()) path += " → ";
      const OpStats& s = ev.layer(l).ops[op];
      bool na = shown_as_not_observed(s.count, ev.op_observed[static_cast<size_t>(l)][op]);
      path += fmt::format("{} {}", layer_title(l),
                          na ? std::string("not observed") : esc(human_bytes(s.bytes)));
    }
    if (path.empty()) continue;
    out << fmt::format("<b>{} down the stack:</b> {}<br>", op == 0 ? "Reads" : "Writes", path);
  }
  out << "</p>\n";
}

// What the layers between the application and the device absorbed, as `layers`' cache table.
void absorbed_summary(const Evidence& ev, std::ostream& out) {
  stack_path(ev, out);
  if (!ev.observed[static_cast<size_t>(Layer::kBlock)].observed) return;
  out << "<p class=\"lead\" style=\"margin-top:10px\">";
  for (size_t op = 0; op < 2; ++op) {
    Layer src = application_layer([&](Layer l) { return ev.layer(l).ops[op].bytes; });
    uint64_t app = ev.layer(src).ops[op].bytes, dev = ev.layer(Layer::kBlock).ops[op].bytes;
    uint64_t absorbed = app > dev ? app - dev : 0;
    out << fmt::format(
        "<b>{}:</b> the application {} {} ({} layer), the device {} {}: {} "
        "absorbed ({:.1f} % reached the device).<br>",
        op == 0 ? "Reads" : "Writes", op == 0 ? "read" : "wrote", esc(human_bytes(app)),
        layer_key(src), op == 0 ? "read" : "wrote", esc(human_bytes(dev)),
        esc(human_bytes(absorbed)),
        app ? 100.0 * static_cast<double>(dev) / static_cast<double>(app) : 0.0);
  }
  out << "</p>\n";
}

}  // namespace

void write_funnel_section(const Evidence& ev, std::ostream& out) {
  out << "<section id=\"funnel\"><h2>The I/O stack, layer by layer</h2><p class=\"lead\">Each "
         "request as every layer saw it, from the application (HDF5, MPI-IO, User: EZTrace; "
         "Syscall) down "
         "through the kernel's VFS, file system and page cache to the block device. What a layer "
         "does not pass down was absorbed: cached, merged or deferred. Bars: bytes "
         "(<span style=\"color:#2f6fb0\">■ read</span>, <span style=\"color:#e07b24\">■ "
         "written</span>), on one scale.</p>\n<table><tr><th class=\"l\">Layer</th><th>Reads</th>"
         "<th>Writes</th><th>Other</th><th>Read</th><th>Written</th><th>Time</th>"
         "<th class=\"l\">Bytes</th></tr>\n";
  uint64_t max = 0;
  for (Layer l : kAllLayers) {
    const LayerStats& s = funnel_cells(ev, l).stats;
    max = std::max({max, s.ops[0].bytes, s.ops[1].bytes});
  }
  for (Layer l : kAllLayers) funnel_row(ev, l, max, out);
  out << "</table>\n";
  absorbed_summary(ev, out);
  write_infrastructure_note(ev, out);
  out << "</section>\n";
}

namespace {

// The plot and its peak labels (120 px) fit the section's 1172 px: no scroll bar hides the labels.
constexpr int kLeft = 170, kPlotW = 880, kRowH = 34;

// The bins drawn: from the first to the last with any activity, stretched over the plot.
struct View {
  size_t lo = 0, n = Timeline::kBins;
  double bw() const { return static_cast<double>(kPlotW) / static_cast<double>(n); }
  bool shows(size_t i) const { return i >= lo && i < lo + n; }
  double x(size_t i) const { return kLeft + static_cast<double>(i - lo) * bw(); }
};

View active_view(const Timeline& tl) {
  size_t lo = Timeline::kBins, hi = 0;
  auto see = [&](size_t i) { lo = std::min(lo, i), hi = std::max(hi, i); };
  for (size_t i = 0; i < Timeline::kBins; ++i) {
    bool any = tl.max_depth[i] > 0 || tl.throttled[i] > 0;
    for (auto& layer : tl.ops) any |= layer[i] > 0;
    for (auto& [name, busy] : tl.thread_busy) any |= busy[i] > 0;
    if (any) see(i);
  }
  if (lo > hi) return {};
  return {lo, hi - lo + 1};
}

// One row of bars, height by value relative to the row's peak.
template <class Values>
void bar_row(std::ostream& out, const View& view, int y, const Values& v, const char* colour,
             const std::string& label, const std::string& peak_text) {
  double peak = 0;
  for (auto x : v) peak = std::max(peak, static_cast<double>(x));
  out << fmt::format(
      "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" font-size=\"12\">{}</text>"
      "<text x=\"{}\" y=\"{}\" font-size=\"10\" fill=\"#5b6577\">{}</text>",
      kLeft - 8, y + 18, esc(label), kLeft + kPlotW + 6, y + 10, esc(peak_text));
  out << fmt::format("<line x1=\"{0}\" x2=\"{1}\" y1=\"{2}\" y2=\"{2}\" stroke=\"#dde2ea\"/>",
                     kLeft, kLeft + kPlotW, y + kRowH - 4);
  if (peak <= 0) return;
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] == 0 || !view.shows(i)) continue;
    double h = std::max(1.0, (kRowH - 8) * static_cast<double>(v[i]) / peak);
    out << fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{:.1f}\" "
        "fill=\"{}\"/>",
        view.x(i), y + kRowH - 4 - h, view.bw(), h, colour);
  }
}

// Per-thread heat map: the share of each bin a thread spent in I/O, darker = busier.
void heat_rows(const Evidence& ev, const View& view, std::ostream& out, int& y) {
  const Timeline& tl = ev.timeline;
  size_t shown = 0;
  for (auto& [name, busy] : tl.thread_busy) {
    if (shown++ == 32) break;
    out << fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" font-size=\"11\">{}</text>",
                       kLeft - 8, y + 12, esc(name.size() > 26 ? name.substr(0, 25) + "…" : name));
    out << fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"14\" fill=\"#f0f3f7\"/>",
                       kLeft, y + 1, kPlotW);
    for (size_t i = 0; i < busy.size(); ++i) {
      double f = std::clamp(busy[i] / static_cast<double>(tl.width), 0.0, 1.0);
      if (f <= 0 || !view.shows(i)) continue;
      out << fmt::format(
          "<rect x=\"{:.1f}\" y=\"{}\" width=\"{:.2f}\" height=\"14\" "
          "fill=\"#c0392b\" fill-opacity=\"{:.2f}\"/>",
          view.x(i), y + 1, view.bw(), 0.12 + 0.88 * f);
    }
    y += 17;
  }
}

void time_axis(const Evidence& ev, const View& view, std::ostream& out, int y) {
  const Timeline& tl = ev.timeline;
  double t0 = ev.seconds(tl.width) * static_cast<double>(view.lo);
  double span = ev.seconds(tl.width) * static_cast<double>(view.n);
  for (int i = 0; i <= 6; ++i) {
    double x = kLeft + kPlotW * i / 6.0;
    out << fmt::format(
        "<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\" stroke=\"#aab3c2\""
        "/><text x=\"{0:.1f}\" y=\"{3}\" font-size=\"10\" text-anchor=\"middle\">{4}"
        "</text>",
        x, y, y + 4, y + 15, esc(human_seconds(t0 + span * i / 6.0)));
  }
}

}  // namespace

void write_timeline_section(const Evidence& ev, std::ostream& out) {
  const Timeline& tl = ev.timeline;
  double bin_s = ev.seconds(tl.width);
  View view = active_view(tl);
  out << fmt::format(
      "<section id=\"timeline\"><h2>Timeline</h2><p class=\"lead\">Bytes per second moved at each "
      "layer (each row on its own scale, peak at the right), the block devices' queue depth, the "
      "time writers slept throttled by the dirty-page limits, and when each thread was inside an "
      "I/O call (darker: a larger share of the {} interval). "
      "<span style=\"color:#c0392b\">Red lines</span>: fsync/fdatasync.</p>\n",
      esc(human_seconds(bin_s)));
  size_t threads = std::min<size_t>(tl.thread_busy.size(), 32);
  int height =
      20 + static_cast<int>(kLayerCount + 2) * kRowH + 24 + static_cast<int>(threads) * 17 + 30;
  out << fmt::format(
      "<div style=\"overflow-x:auto\"><svg width=\"{}\" height=\"{}\" "
      "role=\"img\" aria-label=\"I/O timeline\">",
      kLeft + kPlotW + 120, height);
  int y = 10;
  for (Layer l : kAllLayers) {
    std::array<double, Timeline::kBins> rate{};
    for (size_t i = 0; i < Timeline::kBins; ++i)
      rate[i] = static_cast<double>(tl.bytes[static_cast<size_t>(l)][i]) / bin_s;
    double peak = *std::max_element(rate.begin(), rate.end());
    std::string label(layer_title(l));
    std::string peak_text = not_observed_note(ev, l).empty()
                                ? esc(human_bytes(static_cast<uint64_t>(peak))) + "/s"
                                : "not observed";
    bar_row(out, view, y, rate, kLayerColour[static_cast<size_t>(l)], label, peak_text);
    y += kRowH;
  }
  uint64_t depth_peak = *std::max_element(tl.max_depth.begin(), tl.max_depth.end());
  bar_row(out, view, y, tl.max_depth, "#7f8c8d", "Block queue depth",
          fmt::format("max {}", depth_peak));
  y += kRowH;
  // Share of each interval the threads slept in balance_dirty_pages (summed over threads).
  std::array<double, Timeline::kBins> throttled{};
  for (size_t i = 0; i < Timeline::kBins; ++i)
    throttled[i] = static_cast<double>(tl.throttled[i]) / static_cast<double>(tl.width);
  bar_row(out, view, y, throttled, "#8e44ad", "Dirty throttling",
          ev.dirty_throttle_observed ? fmt::format("{} pauses", ev.dirty_throttle_count)
                                     : std::string("not recorded"));
  y += kRowH + 4;
  out << fmt::format(
      "<text x=\"{}\" y=\"{}\" font-size=\"12\" font-weight=\"600\">Threads in "
      "I/O</text>",
      8, y + 10);
  y += 16;
  heat_rows(ev, view, out, y);
  for (uint64_t t : tl.syncs) {
    double bins =
        static_cast<double>(t < tl.start ? 0 : t - tl.start) / static_cast<double>(tl.width);
    double x = kLeft + view.bw() * (bins - static_cast<double>(view.lo));
    out << fmt::format(
        "<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"6\" y2=\"{1}\" stroke=\"#c0392b\" "
        "stroke-width=\"1.2\" stroke-opacity=\"0.7\"><title>fsync</title></line>",
        x, y);
  }
  time_axis(ev, view, out, y + 2);
  out << "</svg></div></section>\n";
}

}  // namespace ezio::analysis
