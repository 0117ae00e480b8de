// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// EZTrace's layers in `eziotrace [run] -t MODULES -o DIR -- srun ...` (docs/cluster.md, "EZTrace's
// layers across nodes"). EZTrace writes one archive per MPI job, every rank into the directory it
// names, rank 0 the global definitions: every task names the job's one EZTrace directory,
// DIR.parts/eztrace, on the file system the nodes share. A task records its node's kernel layers
// with the alignment data of its own processes (not merged: the EZTrace archive is complete only
// when every rank has finalized); when srun returns, each part is merged with that archive as
// `eziotrace merge` does (its own processes' locations, aligned on its host's clock), and the
// merged parts are assembled as merge-hosts does.
#include <filesystem>
#include <string>
#include <vector>

#include "converters/hosts/host_part.h"
#include "recorder/session/record.h"

namespace ezio::converters {

// The job's EZTrace directory in its parts directory.
inline constexpr char kJobEztraceDir[] = "eztrace";

// A task's recording: rec.command run under EZTrace (modules as `-t` takes them, the MPI module
// chosen as on one node) with its trace in trace_dir, its node's kernel layers into rec.output with
// the helper's alignment data (eziotrace-alignment) and the clock file measured against clock_ref.
// Sets the command's status to the application's.
void record_task_with_eztrace(const recorder::RecordOptions& rec,
                              const std::vector<std::string>& modules,
                              const std::filesystem::path& trace_dir, const std::string& clock_ref);

// Each part merged with the job's EZTrace archive(s) in trace_dir into <part>.merged, its clock
// file copied beside; the merged parts are returned. A part that cannot be merged is added to
// absent with why.
std::vector<std::filesystem::path> merge_user_layers(
    const std::vector<std::filesystem::path>& parts, const std::filesystem::path& trace_dir,
    std::vector<HostPart>& absent);

}  // namespace ezio::converters
