// SPDX-License-Identifier: GPL-2.0-only
// The funnel's line on what is not the application's I/O: the MPI launcher's processes and the
// start-up (loader, libraries, /proc, /sys, /etc), counted apart so that the funnel's shares are
// the application's data (docs/analysis.md, "The application and the infrastructure").
#include <fmt/format.h>

#include "analysis/analyzers/svg.h"
#include "analysis/analyzers/table.h"
#include "analysis/report/report_html.h"

namespace ezio::analysis {

void write_infrastructure_note(const Evidence& ev, std::ostream& out) {
  auto at = [&](Layer l) -> const LayerStats& { return ev.infrastructure[static_cast<size_t>(l)]; };
  const LayerStats& sys = at(Layer::kSyscall).count() ? at(Layer::kSyscall) : at(Layer::kUser);
  const LayerStats& block = at(Layer::kBlock);
  if (sys.count() == 0 && block.count() == 0) return;
  out << fmt::format(
      "<p class=\"note\" id=\"infrastructure\" data-calls=\"{}\" data-read=\"{}\" "
      "data-written=\"{}\" data-block-read=\"{}\" data-block-written=\"{}\">Infrastructure, "
      "left out above: the MPI launcher's processes, start-up and system files (loader, "
      "libraries, /proc, /sys, /etc) and inherited descriptors made {} calls, read {} and wrote "
      "{}; the device read {} and wrote {} for them. <code>eziotrace report --all</code> counts "
      "them with the application.</p>\n",
      sys.count(), sys.ops[0].bytes, sys.ops[1].bytes, block.ops[0].bytes, block.ops[1].bytes,
      sys.count(), xml_escape(human_bytes(sys.ops[0].bytes)),
      xml_escape(human_bytes(sys.ops[1].bytes)), xml_escape(human_bytes(block.ops[0].bytes)),
      xml_escape(human_bytes(block.ops[1].bytes)));
}

}  // namespace ezio::analysis
