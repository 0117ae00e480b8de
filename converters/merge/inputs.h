// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The merge's inputs: which EZTrace archive, and which of its locations, belong to which process
// image of the recording (docs/merge.md, "The merge", step 1).
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "converters/eztrace/sidecar.h"
#include "converters/merge/archive_model.h"

namespace ezio::converters {

// One EZTrace process: its alignment data, the archive it wrote, and which of the archive's
// locations are its threads. In MPI mode all ranks write one shared archive, each its own
// locations; otherwise a process owns its whole archive.
struct EztraceInput {
  Sidecar process;
  std::shared_ptr<const EztraceArchive> archive;
  std::vector<OTF2_LocationRef> locations;
};

// A process whose EZTrace archive is there but cannot be read (EZTrace wrote it corrupt, or it
// was truncated): the merge keeps the process, without its user-level calls, and says why.
struct UnreadableTrace {
  Sidecar process;
  std::filesystem::path anchor;
  std::string reason;  // the reader's message
};

// What the merge gets of the EZTrace side: the archives it can read, and the processes whose
// archive it cannot.
struct EztraceInputs {
  std::vector<EztraceInput> traces;
  std::vector<UnreadableTrace> unreadable;
};

// Reads an EZTrace archive's definitions, and its events into the summary and an event store (a
// temporary file in temp_dir): the archive's one pass. When the archive cannot be read, nothing
// and the reader's message in `unreadable`; a failure to write the store still throws.
std::optional<EztraceArchive> index_eztrace_archive(const std::filesystem::path& anchor,
                                                    const std::filesystem::path& temp_dir,
                                                    std::string& unreadable);

// Where the EZTrace archive of an image may be, in order of preference.
using ArchiveCandidates = std::function<std::vector<std::filesystem::path>(const Sidecar&)>;

// Finds the EZTrace archive of every image that exited (candidates: where to look) and reads it
// (its events into a temporary file in temp_dir: next to the merge's output).
// Images whose archive is missing are reported in warnings and skipped; those whose archive
// cannot be read are reported in warnings and returned as unreadable, never thrown for. A
// location of a shared (MPI) archive that no image owns is reported in warnings, unless it is in
// elsewhere: a rank that another part of the same job holds (the merge of one host's part).
EztraceInputs load_eztrace_inputs(const std::vector<Sidecar>& images,
                                  const ArchiveCandidates& candidates,
                                  std::vector<std::string>& warnings,
                                  const std::filesystem::path& temp_dir,
                                  const std::set<OTF2_LocationRef>& elsewhere = {});
// The same for the records of sidecar_dir, each archive where the image wrote it.
EztraceInputs load_eztrace_inputs(
    const std::filesystem::path& sidecar_dir, std::vector<std::string>& warnings,
    const std::filesystem::path& temp_dir = std::filesystem::temp_directory_path());

}  // namespace ezio::converters
