// SPDX-License-Identifier: GPL-2.0-only
#include "converters/merge_command.h"

#include <spdlog/spdlog.h>

#include "common/command.h"
#include "common/output_dir.h"
#include "converters/eztrace/run_merge.h"

namespace ezio::converters {

void merge_command(const MergeCommandOptions& o) {
  std::filesystem::path out = output_path(o.out, "");
  Staging staging(out, o.force);
  MergeSummary s = merge_recorded(o.eztrace, o.kernel, staging.dir(), o.sidecars);
  staging.publish();
  spdlog::info("merged archive: {}", (out / s.anchor.filename()).string());
  if (s.report.user_level != "complete") spdlog::warn("user level: {}", s.report.user_level);
  command_status() = s.report.violations ? 3 : 0;
}

}  // namespace ezio::converters
