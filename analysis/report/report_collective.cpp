// SPDX-License-Identifier: GPL-2.0-only
// The report's `collective` section: two-phase collective I/O, as `eziotrace collective` gives it
// (analysis/analyzers/collective.h): per collective MPI-IO operation, each rank's request and
// whose calls, inside their own collective call, moved its bytes.
#include <fmt/format.h>

#include <ostream>

#include "analysis/analyzers/svg.h"
#include "analysis/report/report_html.h"

namespace ezio::analysis {
namespace {

constexpr size_t kMaxOps = 40;  // the page stays readable; the command lists them all

std::string esc(const std::string& s) { return xml_escape(s); }

// "rank0 [200] 4.0 KiB, rank1 [201] 4.0 KiB": whose calls moved `asker`'s range, or why unknown.
std::string movers_text(const CollectiveOp& op, const CollectivePart& asker) {
  if (!asker.has_offset) return "<span class=\"na\">no offset (shared pointer)</span>";
  std::string s;
  for (const CollectivePart& m : op.parts) {
    uint64_t n = covered_bytes(asker, m);
    if (n == 0) continue;
    s += fmt::format("{}{} {}", s.empty() ? "" : ", ", esc(m.process), esc(human_bytes(n)));
  }
  return s.empty() ? "<span class=\"na\">no data call with an offset inside any rank's call</span>"
                   : s;
}

}  // namespace

void write_collective_section(const Evidence& ev, std::ostream& out) {
  out << "<section id=\"collective\"><h2>Collective MPI-IO</h2><p class=\"lead\">Two-phase "
         "collective I/O: each collective call of every rank, what the rank asked for, the POSIX "
         "and system calls it made inside its own call (the aggregators write the others' data "
         "there), and whose calls moved the rank's byte range.</p>\n";
  if (ev.collectives.empty()) {
    out << "<p class=\"na\">No collective MPI-IO call in this trace (recorded without "
           "<code>-t mpiio</code>, or none made).</p></section>\n";
    return;
  }
  out << "<table><tr><th class=\"l\">File</th><th>#</th><th class=\"l\">Rank</th>"
         "<th class=\"l\">Function</th><th>Asked</th><th>Offset</th><th>POSIX calls</th>"
         "<th>Syscalls</th><th>Bytes moved</th><th>Time</th><th class=\"l\">Moved by</th></tr>\n";
  for (size_t i = 0; i < ev.collectives.size() && i < kMaxOps; ++i) {
    const CollectiveOp& op = ev.collectives[i];
    for (const CollectivePart& p : op.parts) {
      uint64_t moved = p.syscall_calls ? p.syscall_bytes : p.posix_bytes;
      out << fmt::format(
          "<tr data-collective=\"{}\"><td class=\"l\">{}</td><td>{}</td><td class=\"l\">{}</td>"
          "<td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
          "<td>{}</td><td class=\"l\">{}</td></tr>\n",
          op.index, esc(op.file), op.index, esc(p.process), esc(p.function),
          esc(human_bytes(p.asked)), p.has_offset ? fmt::format("{}", p.offset) : "–",
          p.posix_calls, p.syscall_calls, esc(human_bytes(moved)),
          esc(human_seconds(ev.seconds(p.end - p.start))), movers_text(op, p));
    }
  }
  out << "</table>";
  if (ev.collectives.size() > kMaxOps) {
    out << fmt::format("<p class=\"na\">{} more: <code>eziotrace collective</code> lists them.</p>",
                       ev.collectives.size() - kMaxOps);
  }
  out << "</section>\n";
}

}  // namespace ezio::analysis
