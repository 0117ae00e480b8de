// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The archives `eziotrace merge EZTRACE_ARCHIVE KERNEL_ARCHIVE` is given, checked before anything
// is written: each argument is used as given (never a path recorded at run time instead), and what
// is wrong with it is said (rc 1; 2 for arguments given in the wrong place).
#include <filesystem>
#include <vector>

#include "converters/merge/inputs.h"

namespace ezio::converters {

// The EZTrace archives an EZTRACE_ARCHIVE argument names: eztrace_log.otf2, its <prog>_trace
// directory, or a directory holding <prog>_trace directories (also one level deeper, as
// `eziotrace --keep-parts` keeps them: <pid>.<n>/<prog>_trace). Fails on anything else. An
// EZTrace archive that is there but cannot be read is not refused: the merge reports it.
struct GivenEztrace {
  std::filesystem::path root;                  // the argument, absolute
  std::vector<std::filesystem::path> anchors;  // eztrace_log.otf2 files found
  bool single = false;                         // the argument named one archive
};
GivenEztrace given_eztrace(const std::filesystem::path& arg,
                           const std::filesystem::path& kernel_anchor);

// The kernel archive's anchor; fails unless it is an archive `eziotrace record` wrote.
std::filesystem::path given_kernel(const std::filesystem::path& arg);

// Where an image's archive is among the given ones: the anchor whose path below the argument ends
// the path the image recorded (<prog>_trace/eztrace_log.otf2, or <pid>.<n>/<prog>_trace/...); for a
// single archive, the images of its program.
ArchiveCandidates candidates_in(const GivenEztrace& given);

}  // namespace ezio::converters
