// SPDX-License-Identifier: GPL-2.0-only
// The report's `datasets` section: one row per HDF5 dataset, as `eziotrace datasets` gives it
// (analysis/analyzers/datasets.h): its transfers and what the layers below did inside them.
#include <fmt/format.h>

#include <ostream>

#include "analysis/analyzers/svg.h"
#include "analysis/report/report_html.h"

namespace ezio::analysis {
namespace {

constexpr size_t kMaxRows = 60;  // the page stays readable; the command lists them all

std::string esc(const std::string& s) { return xml_escape(s); }

std::string below(uint64_t bytes, bool seen) {
  if (!seen && bytes == 0) return "<span class=\"na\">not observed</span>";
  return esc(human_bytes(bytes));
}

}  // namespace

void write_datasets_section(const Evidence& ev, std::ostream& out) {
  out << "<section id=\"datasets\"><h2>HDF5 datasets</h2><p class=\"lead\">Each dataset's "
         "H5Dwrite and H5Dread calls, the bytes they asked, their time, and the bytes the MPI-IO, "
         "POSIX and system calls inside them moved, down to the block requests those system calls "
         "caused. HDF5 writes small pieces, cached chunks, compact data and its metadata later, in "
         "H5Dclose or H5Fflush: those bytes are not in the dataset's row.</p>\n";
  if (ev.datasets.empty()) {
    out << "<p class=\"na\">No H5Dwrite or H5Dread in this trace.</p></section>\n";
    return;
  }
  const DatasetLayersSeen& seen = ev.datasets_seen;
  out << "<table><tr><th class=\"l\">File</th><th class=\"l\">Dataset</th><th class=\"l\">Layout"
         "</th><th>Chunk</th><th class=\"l\">Transfer</th><th>Procs</th><th>H5Dwrite</th>"
         "<th>H5Dread</th><th>Asked written</th><th>Asked read</th><th>Time</th>"
         "<th>MPI-IO</th><th>POSIX</th><th>Syscall</th><th>Block</th></tr>\n";
  for (size_t i = 0; i < ev.datasets.size() && i < kMaxRows; ++i) {
    const DatasetRow& r = ev.datasets[i];
    std::string name = r.object.empty() ? "(anonymous)" : r.object;
    // Rows come by file: a file's path is shown on its first row only, the table stays narrow.
    bool same_file = i > 0 && ev.datasets[i - 1].file == r.file;
    out << fmt::format(
        "<tr data-dataset=\"{}\" data-writes=\"{}\" data-reads=\"{}\" data-asked-write=\"{}\" "
        "data-asked-read=\"{}\" data-posix=\"{}\" data-syscall=\"{}\"><td class=\"path\">{}</td>"
        "<td class=\"path\">{}</td><td class=\"l\">{}</td><td>{}</td><td class=\"l\">{}</td>"
        "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td><td>{}</td></tr>\n",
        esc(name), r.writes, r.reads, r.asked_write_bytes, r.asked_read_bytes, r.posix_bytes,
        r.syscall_bytes, same_file ? "" : esc(r.file), esc(name),
        r.layout.empty() ? "–" : esc(r.layout),
        r.chunk_bytes ? esc(human_bytes(r.chunk_bytes)) : "–", esc(r.xfer()), r.processes.size(),
        r.writes, r.reads, esc(human_bytes(r.asked_write_bytes)),
        esc(human_bytes(r.asked_read_bytes)), esc(human_seconds(ev.seconds(r.ticks))),
        below(r.mpiio_bytes, seen.mpiio), below(r.posix_bytes, seen.posix),
        below(r.syscall_bytes, seen.syscall), below(r.block_bytes, seen.block));
  }
  out << "</table>";
  if (ev.datasets.size() > kMaxRows) {
    out << fmt::format("<p class=\"na\">{} more: <code>eziotrace datasets</code> lists them.</p>",
                       ev.datasets.size() - kMaxRows);
  }
  out << "</section>\n";
}

}  // namespace ezio::analysis
