// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// `eziotrace record` keeps the helper's alignment data with the kernel archive, so that
// `eziotrace merge` needs nothing else.
#include <filesystem>
#include <string>
#include <vector>

#include "common/output_dir.h"
#include "common/schema/files.h"

namespace ezio::converters {

// The files are written to <out>.alignment during the run (a working directory of eziotrace's,
// common/output_dir.h) and moved into the archive directory by store_into(); the directory is
// removed when that never happens.
class AlignmentCapture {
 public:
  // Creates the directory (what is in the way is refused; with force, a leftover of eziotrace's is
  // removed) and adds the helper (LD_PRELOAD, after what is there) and EZIOTRACE_SIDECAR_DIR to
  // env.
  AlignmentCapture(const std::filesystem::path& out, std::vector<std::string>& env, bool force);
  const std::filesystem::path& dir() const { return dir_.dir(); }
  // Moves the alignment files to <archive_dir>/eziotrace-alignment; returns how many there are.
  size_t store_into(const std::filesystem::path& archive_dir);

 private:
  OwnedDir dir_;
};

// The alignment directory inside a kernel archive directory.
inline constexpr const char* kAlignmentDirName = schema::kAlignmentDir;

}  // namespace ezio::converters
