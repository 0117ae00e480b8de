// SPDX-License-Identifier: GPL-2.0-only
#include "analysis/analyzers/svg.h"

#include <fmt/format.h>

#include <algorithm>

namespace ezio::analysis {
std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string ns_label(uint64_t ns) {
  if (ns >= 1'000'000'000) return fmt::format("{:g} s", static_cast<double>(ns) / 1e9);
  if (ns >= 1'000'000) return fmt::format("{:g} ms", static_cast<double>(ns) / 1e6);
  if (ns >= 1'000) return fmt::format("{:g} us", static_cast<double>(ns) / 1e3);
  return fmt::format("{} ns", ns);
}

std::string histograms_svg(const std::string& title, const std::vector<HistogramPanel>& panels) {
  // One common x range so that panels can be compared by eye.
  int lo = Log2Histogram::kBuckets, hi = -1;
  for (auto& p : panels) {
    for (int b = 0; b < Log2Histogram::kBuckets; ++b) {
      if (p.histogram.bucket(b)) lo = std::min(lo, b), hi = std::max(hi, b);
    }
  }
  if (hi < 0) lo = hi = 0;
  const int nb = hi - lo + 1;
  const int bar = std::max(14, 720 / nb), plot_h = 120, panel_h = plot_h + 70, left = 70;
  const int width = left + nb * bar + 30;
  const int height = 50 + static_cast<int>(panels.size()) * panel_h + 10;

  std::string s = fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" font-family=\"sans-serif\" font-size=\"11\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{2}\" y=\"24\" font-size=\"15\" font-weight=\"bold\">{3}</text>\n",
      width, height, left, xml_escape(title));
  if (panels.empty()) {
    s += fmt::format("<text x=\"{}\" y=\"50\">no calls</text>\n", left);
  }
  for (size_t i = 0; i < panels.size(); ++i) {
    const auto& h = panels[i].histogram;
    int top = 50 + static_cast<int>(i) * panel_h;
    int base = top + 20 + plot_h;
    uint64_t peak = 1;
    for (int b = lo; b <= hi; ++b) peak = std::max(peak, h.bucket(b));
    s += fmt::format("<text x=\"{}\" y=\"{}\" font-weight=\"bold\">{}</text>\n", left, top + 12,
                     xml_escape(panels[i].title));
    s += fmt::format(
        "<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"black\"/>\n"
        "<text x=\"{3}\" y=\"{4}\" text-anchor=\"end\">{5}</text>\n"
        "<text x=\"{3}\" y=\"{1}\" text-anchor=\"end\">0</text>\n",
        left, base, left + nb * bar, left - 6, top + 30, peak);
    for (int b = lo; b <= hi; ++b) {
      int x = left + (b - lo) * bar;
      uint64_t n = h.bucket(b);
      int bh = static_cast<int>(static_cast<double>(n) / static_cast<double>(peak) * plot_h);
      if (n > 0) {
        s += fmt::format(
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#3b75af\">"
            "<title>{} to {}: {} calls</title></rect>\n",
            x + 1, base - bh, bar - 2, bh, ns_label(Log2Histogram::bucket_low(b)),
            ns_label(Log2Histogram::bucket_high(b)), n);
      }
      if ((b - lo) % 2 == 0) {
        s += fmt::format(
            "<text x=\"{0}\" y=\"{1}\" transform=\"rotate(45 {0} {1})\" font-size=\"9\">{2}"
            "</text>\n",
            x + 2, base + 12, ns_label(Log2Histogram::bucket_low(b)));
      }
    }
  }
  s += "</svg>\n";
  return s;
}

}  // namespace ezio::analysis
