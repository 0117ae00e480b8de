// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Running the merge of a recording: after `eziotrace -- cmd` (finish_eztrace) or for
// `eziotrace merge` of archives recorded separately (merge_recorded).
//
//   auto summary = ezio::converters::finish_eztrace(setup, kernel_anchor, out_dir);
//   // summary.report.violations, summary.anchor (= out_dir/eziotrace.otf2)
#include <filesystem>
#include <memory>
#include <set>

#include "converters/eztrace/environment.h"
#include "converters/merge/merge.h"

namespace ezio::converters {

struct MergeSummary {
  MergeReport report;
  std::filesystem::path anchor;  // <out_dir>/eziotrace.otf2
};

// After the command ended: finds every EZTrace archive and alignment file of the run, merges them
// with the kernel archive into out_dir, logs the report (loudly on alignment violations).
// kernel_events: the copy of the kernel archive's events the recorder made while writing it
// (recorder::RecordExtras::tap), so that the archive's events are not decoded again; nullptr: read
// them from the archive.
MergeSummary finish_eztrace(const EztraceSetup& setup, const std::filesystem::path& kernel_anchor,
                            const std::filesystem::path& out_dir,
                            std::unique_ptr<EventStore> kernel_events = nullptr);

// `eziotrace merge`: eztrace = eztrace_log.otf2, its <prog>_trace directory, or a directory of
// <prog>_trace directories; kernel = eziotrace.otf2 or its directory; sidecar_dir empty = the
// kernel archive's eziotrace-alignment (eziotrace record), else <EZTrace directory>/
// eziotrace-alignment.
// elsewhere: EZTrace locations of ranks that other parts of the same job hold (the merge of one
// host's part, converters/cluster/user_layers.h): not reported as belonging to no process.
MergeSummary merge_recorded(const std::filesystem::path& eztrace,
                            const std::filesystem::path& kernel_anchor,
                            const std::filesystem::path& out_dir,
                            const std::filesystem::path& sidecar_dir,
                            const std::set<OTF2_LocationRef>& elsewhere = {});

}  // namespace ezio::converters
