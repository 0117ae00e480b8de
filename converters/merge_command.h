// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// `eziotrace merge` (its command line: app/merge.cpp).
#include <string>

namespace ezio::converters {

struct MergeCommandOptions {
  std::string eztrace, kernel, out, sidecars;  // sidecars: "" for the default place
  bool force = false;
};

// Merges into o.out (staged, published whole); the command's status is 3 on alignment
// violations.
void merge_command(const MergeCommandOptions& o);

}  // namespace ezio::converters
