// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// `eziotrace report`: one self-contained HTML page (inline CSS and SVG, no script, no network) of a
// trace: header, findings, the layer funnel, timeline, latency, files, devices, threads
// (docs/analysis.md, `report`).
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/analyzers/advise.h"
#include "analysis/analyzers/evidence.h"

namespace ezio::analysis {

// The page's sections, in order: (element id, tab title); tests look for each. `collective` only
// when the trace has MPI-IO calls, `datasets` only when it has HDF5 calls: a page about a program
// that does neither has no tab for them.
std::vector<std::pair<std::string_view, std::string_view>> report_sections(const Evidence& ev);

void write_report(const Evidence& ev, const Advice& advice, std::ostream& out);

// Parts of the page, in report_sections.cpp and report_timeline.cpp.
void write_header_section(const Evidence& ev, std::ostream& out);
void write_findings_section(const Advice& advice, std::ostream& out);
void write_funnel_section(const Evidence& ev, std::ostream& out);
void write_collective_section(const Evidence& ev, std::ostream& out);  // report_collective.cpp
void write_datasets_section(const Evidence& ev, std::ostream& out);    // report_datasets.cpp
void write_timeline_section(const Evidence& ev, std::ostream& out);
void write_latency_section(const Evidence& ev, std::ostream& out);
void write_files_section(const Evidence& ev, std::ostream& out);
void write_devices_section(const Evidence& ev, std::ostream& out);
void write_threads_section(const Evidence& ev, std::ostream& out);
// Only for an archive of several hosts (ev.hosts), after the header: report_hosts.cpp.
void write_hosts_section(const Evidence& ev, std::ostream& out);

// The funnel's line on the launcher's and start-up I/O, counted apart (report_infrastructure.cpp).
void write_infrastructure_note(const Evidence& ev, std::ostream& out);

// "not observed" note of a layer the recording could not see, else "".
std::string not_observed_note(const Evidence& ev, Layer l);

// What `eziotrace report` is told (app/report.cpp).
struct ReportOptions {
  std::string trace, output = "report.html", config;
  bool force = false;
  bool all = false;  // --all: the launcher's and start-up I/O counted as the application's
};

// Writes the page of o.trace to o.output (replacing only a page eziotrace wrote, with o.force) and
// prints its absolute path.
void report_command(const ReportOptions& o);

}  // namespace ezio::analysis
