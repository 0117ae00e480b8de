// SPDX-License-Identifier: GPL-2.0-only
#include "analysis/report/report_html.h"

#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <sstream>

#include "analysis/analyzers/svg.h"
#include "common/error.h"
#include "common/output_file.h"

namespace ezio::analysis {
namespace {

// The page's style: one block, no external font or stylesheet, readable printed too.
constexpr const char* kStyle = R"css(
:root{--ink:#1d2433;--mute:#5b6577;--line:#dde2ea;--bg:#f5f7fa;--card:#fff;
--read:#2f6fb0;--write:#e07b24;--high:#c0392b;--warn:#d68910;--info:#2471a3;--ok:#1e8449}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;
color:var(--ink);background:var(--bg)}
header.top{background:#1d2433;color:#fff;padding:18px 32px}
header.top h1{margin:0;font-size:22px;font-weight:600}
header.top .cmd{font-family:ui-monospace,"DejaVu Sans Mono",monospace;color:#c9d4e5;margin-top:4px;
word-break:break-all}
nav{background:#fff;border-bottom:1px solid var(--line);padding:8px 32px;position:sticky;top:0;
z-index:2}
nav a{margin-right:18px;color:var(--info);text-decoration:none;font-weight:500}
main{max-width:1280px;margin:0 auto;padding:8px 32px 48px}
section{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:16px 22px;
margin:18px 0}
section h2{margin:0 0 4px;font-size:18px}
p.lead{color:var(--mute);margin:0 0 12px}
table{border-collapse:collapse;width:100%;font-size:13px}
th,td{padding:5px 8px;border-bottom:1px solid var(--line);text-align:right;vertical-align:top}
th{background:#f0f3f7;font-weight:600;color:#394357}
td.l,th.l{text-align:left}
td.probe{overflow-wrap:anywhere}
.nw{white-space:nowrap}
td.path{font-family:ui-monospace,"DejaVu Sans Mono",monospace;font-size:12px;word-break:break-all;
text-align:left}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(170px,1fr));gap:10px}
.kv{background:var(--bg);border-radius:6px;padding:8px 10px}
.kv code{word-break:break-all}
.kv b{display:block;font-size:11px;color:var(--mute);font-weight:600;text-transform:uppercase;
letter-spacing:.04em}
.bad{color:var(--high);font-weight:700}
.good{color:var(--ok);font-weight:600}
.na{color:var(--mute);font-style:italic}
.finding{border-left:5px solid var(--info);background:var(--bg);border-radius:6px;
padding:10px 14px;margin:10px 0}
.finding.high{border-color:var(--high)}.finding.warn{border-color:var(--warn)}
.finding h3{margin:0 0 4px;font-size:15px}
.badge{display:inline-block;font-size:11px;font-weight:700;color:#fff;border-radius:4px;
padding:1px 7px;margin-right:8px;background:var(--info);vertical-align:1px}
.badge.high{background:var(--high)}.badge.warn{background:var(--warn)}
.finding .ev{font-variant-numeric:tabular-nums}
.finding ul{margin:4px 0 4px 18px;padding:0;font-family:ui-monospace,monospace;font-size:12px}
.finding .do{margin-top:4px}
.finding a{color:var(--info)}
.absorb{color:var(--ok);font-size:12px;text-align:left;padding-left:150px}
.legend span{display:inline-block;margin-right:14px;font-size:12px;color:var(--mute)}
.legend i{display:inline-block;width:11px;height:11px;border-radius:2px;margin-right:4px;
vertical-align:-1px}
svg text{font-family:system-ui,"DejaVu Sans",sans-serif}
.path-list{margin:0;padding-left:16px;font-family:ui-monospace,monospace;font-size:11.5px;
color:#394357;text-align:left}
.hists{display:grid;grid-template-columns:repeat(auto-fill,minmax(380px,1fr));gap:8px;
margin-top:10px}
.hists svg{width:100%;height:auto}
footer{color:var(--mute);font-size:12px;text-align:center;margin-top:24px}
)css";

// Calls of layer `l` in the trace, the application's and the infrastructure's.
uint64_t calls_of(const Evidence& ev, Layer l) {
  return ev.layer(l).count() + ev.infrastructure[static_cast<size_t>(l)].count();
}

}  // namespace

std::vector<std::pair<std::string_view, std::string_view>> report_sections(const Evidence& ev) {
  std::vector<std::pair<std::string_view, std::string_view>> s = {{"header", "Overview"}};
  if (!ev.hosts.empty()) s.emplace_back("hosts", "Hosts");
  s.emplace_back("findings", "Findings");
  s.emplace_back("funnel", "Layers");
  if (calls_of(ev, Layer::kMpiIo) > 0 || !ev.collectives.empty())
    s.emplace_back("collective", "Collective");
  if (calls_of(ev, Layer::kHdf5) > 0 || !ev.datasets.empty())
    s.emplace_back("datasets", "Datasets");
  for (auto [id, title] : {std::pair{"timeline", "Timeline"},
                           {"latency", "Latency"},
                           {"files", "Files"},
                           {"devices", "Devices"},
                           {"threads", "Threads"}}) {
    s.emplace_back(id, title);
  }
  return s;
}

void write_report(const Evidence& ev, const Advice& advice, std::ostream& out) {
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
         "<meta name=\"generator\" content=\"eziotrace report\">"
         "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
      << "<title>eziotrace report: " << xml_escape(ev.command.empty() ? ev.trace : ev.command)
      << "</title><style>" << kStyle << "</style></head><body>\n";
  out << "<header class=\"top\"><h1>I/O report</h1><div class=\"cmd\">"
      << xml_escape(ev.command.empty() ? ev.trace : ev.command) << "</div></header>\n<nav>";
  auto sections = report_sections(ev);
  for (auto [id, title] : sections) out << fmt::format("<a href=\"#{}\">{}</a>", id, title);
  out << "</nav>\n<main>\n";
  write_header_section(ev, out);
  write_hosts_section(ev, out);
  write_findings_section(advice, out);
  write_funnel_section(ev, out);
  for (auto [id, title] : sections) {
    if (id == "collective") write_collective_section(ev, out);
    if (id == "datasets") write_datasets_section(ev, out);
  }
  write_timeline_section(ev, out);
  write_latency_section(ev, out);
  write_files_section(ev, out);
  write_devices_section(ev, out);
  write_threads_section(ev, out);
  out << "<footer>Written by <code>eziotrace report</code> from " << xml_escape(ev.trace)
      << ". Rules and thresholds: docs/analysis.md.</footer>\n</main></body></html>\n";
}

namespace {

// In every page's head (write_report): what lets --force replace a page eziotrace wrote, and
// nothing else.
constexpr std::string_view kReportSignature =
    "<meta name=\"generator\" content=\"eziotrace report\">";

}  // namespace

void report_command(const ReportOptions& o) {
  // Made first: an output it may not replace is refused before the trace is read.
  OutputFile page(o.output, kReportSignature, o.force);
  Thresholds t;
  if (!o.config.empty()) t.load(o.config);
  t.all = o.all;
  Evidence ev = collect_evidence(o.trace, evidence_options(t));
  std::ostringstream html;  // the page is small: its size does not grow with the trace
  write_report(ev, advise(ev, t), html);
  page.write(html.view());
  page.commit();
  std::cout << std::filesystem::absolute(o.output).string() << "\n";
}

}  // namespace ezio::analysis
