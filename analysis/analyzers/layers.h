// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// `eziotrace layers`: one row per I/O layer (User, Syscall, VFS, FS, Page cache, Block) with
// read/write/other counts, bytes, time and latency percentiles, optionally per file/thread/process,
// and how many application bytes reached the block layer.
#include "analysis/analyzers/options.h"
#include "analysis/analyzers/table.h"

namespace ezio::analysis {

enum class GroupBy { kNone, kFile, kThread, kProcess, kHost };

struct LayersOptions {
  CommonOptions common;
  GroupBy group = GroupBy::kNone;
};

Report run_layers(const LayersOptions& o);

}  // namespace ezio::analysis
