// SPDX-License-Identifier: GPL-2.0-only
// The report's hosts section: one row per host of an archive merged from several hosts
// (analysis/analyzers/host_evidence.h). A one-host archive has no such section.
#include <fmt/format.h>

#include "analysis/analyzers/svg.h"
#include "analysis/analyzers/table.h"
#include "analysis/report/report_html.h"

namespace ezio::analysis {
namespace {

std::string esc(const std::string& s) { return xml_escape(s); }

// The layers whose bytes some host moved, in the stack's order.
std::vector<Layer> layers_with_bytes(const std::vector<HostEvidence>& hosts) {
  std::vector<Layer> out;
  for (Layer l : kAllLayers) {
    for (const auto& h : hosts) {
      const auto& b = h.bytes[static_cast<size_t>(l)];
      if (b[0] + b[1] == 0) continue;
      out.push_back(l);
      break;
    }
  }
  return out;
}

// The devices by their names alone: the column says they are block devices (their locations are
// named "block <dev>").
std::string devices_text(const std::set<std::string>& locations) {
  std::string s;
  for (std::string_view n : locations) {
    if (n.starts_with("block ")) n.remove_prefix(6);
    s += (s.empty() ? "" : ", ") + std::string(n);
  }
  return s.empty() ? "–" : s;
}

std::string lost_text(const HostEvidence& h) {
  std::string s;
  for (const auto& [layer, n] : h.lost) {
    if (n) s += fmt::format("{}{} {}", s.empty() ? "" : ", ", layer, n);
  }
  return s.empty() ? "0" : s;
}

std::string clock_text(const std::optional<int64_t>& ns) {
  if (!ns) return "–";
  const double s = static_cast<double>(*ns) * 1e-9;
  return (s < 0 ? "−" : "") + human_seconds(s < 0 ? -s : s);
}

// The host's block requests, and on a line of its own those of its devices between its
// sessions' windows (a narrow column: the phrase would otherwise wrap word by word).
std::string block_html(const HostEvidence& h) {
  if (!h.outside_windows || *h.outside_windows == 0) return std::to_string(h.block_requests);
  return fmt::format("{}<br><span class=\"nw\">+{} between its sessions</span>", h.block_requests,
                     *h.outside_windows);
}

std::string slurm_text(const HostEvidence& h) {
  if (h.slurm_job.empty()) return "–";
  return h.slurm_step.empty() ? h.slurm_job : h.slurm_job + "." + h.slurm_step;
}

}  // namespace

void write_hosts_section(const Evidence& ev, std::ostream& out) {
  if (ev.hosts.empty()) return;
  out << "<section id=\"hosts\"><h2>Hosts</h2><p class=\"lead\">One row per host of the job "
         "(<code>eziotrace merge-hosts</code>): the processes that did the application's I/O "
         "there (ranks: those EZTrace traced), the bytes read / written at each layer, the "
         "block requests of its devices, what its recording lost, its kernel, and how its "
         "clock was mapped onto the reference host's (offset: the reference's clock minus this "
         "host's, at the start; error: the bound of that measurement).</p>\n";
  const std::vector<Layer> layers = layers_with_bytes(ev.hosts);
  // A job of many layers is wider than the page: the table scrolls inside its section.
  out << "<div style=\"overflow-x:auto\"><table><tr><th "
         "class=\"l\">Host</th><th>Processes</th><th>Ranks</th>";
  for (Layer l : layers) out << "<th>" << esc(std::string(layer_title(l))) << "</th>";
  out << "<th>Block requests</th><th class=\"l\">Devices</th><th class=\"l\">Lost events</th>"
         "<th class=\"l\">Kernel</th><th>Clock offset</th><th>Error bound</th>"
         "<th class=\"l\">Slurm job.step</th></tr>\n";
  for (const HostEvidence& h : ev.hosts) {
    out << fmt::format("<tr data-host=\"{}\"><td class=\"l\">{}</td><td>{}</td><td>{}</td>",
                       esc(h.name), esc(h.name), h.processes.size(), h.ranks.size());
    for (Layer l : layers) {
      const auto& b = h.bytes[static_cast<size_t>(l)];
      // Read over written, so that the many layers' columns fit the page.
      out << fmt::format("<td class=\"nw\">{} /<br>{}</td>", esc(human_bytes(b[0])),
                         esc(human_bytes(b[1])));
    }
    out << fmt::format(
        "<td>{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td>"
        "<td class=\"nw\">{}</td><td class=\"nw\">{}</td><td class=\"l\">{}</td></tr>\n",
        block_html(h), esc(devices_text(h.devices)), esc(lost_text(h)),
        esc(h.kernel.empty() ? "–" : h.kernel), esc(clock_text(h.clock_offset_ns)),
        esc(h.clock_error_ns ? human_seconds(static_cast<double>(*h.clock_error_ns) * 1e-9) : "–"),
        esc(slurm_text(h)));
  }
  out << "</table></div><p class=\"note\">Layer columns: bytes read / written (below). Block "
         "requests "
         "between its sessions: requests of its devices completed between two of its recording "
         "sessions, while none was open (EZIOTRACE::OUTSIDE_WINDOWS::&lt;dev&gt;), in no "
         "count of the archive.</p></section>\n";
}

}  // namespace ezio::analysis
