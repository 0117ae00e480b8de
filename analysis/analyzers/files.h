// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// `eziotrace files`: per file and layer, what Darshan reports per file (operations, bytes, access
// sizes, sequential share, time) plus the kernel layers below the application.
#include "analysis/analyzers/options.h"
#include "analysis/analyzers/table.h"

namespace ezio::analysis {

struct FilesOptions {
  CommonOptions common;
  std::vector<std::string> files;  // keep files whose path contains one of these
};

Report run_files(const FilesOptions& o);

}  // namespace ezio::analysis
