// SPDX-License-Identifier: GPL-2.0-only
#include <spdlog/spdlog.h>

#include "common/command.h"
#include "common/output_dir.h"
#include "common/schema/files.h"
#include "converters/hosts/merge_hosts.h"

namespace ezio::converters {

std::filesystem::path merge_hosts_command(const MergeHostsOptions& o) {
  std::filesystem::path out = output_path(o.out, "");
  std::vector<std::filesystem::path> parts(o.parts.begin(), o.parts.end());
  Staging staging(out, o.force);
  HostsReport r = merge_hosts(parts, staging.dir(), {}, "", o.rewrite_events);
  staging.publish();
  const std::filesystem::path anchor = out / (std::string(schema::kArchiveName) + ".otf2");
  spdlog::info("merged {} host(s), {} events ({} part(s) assembled, {} rewritten): {}", r.hosts,
               r.events, r.assembled, r.rewritten, anchor.string());
  if (r.partial()) {
    spdlog::warn("the archive is {}", r.status);
    command_status() = 4;
  }
  return anchor;
}

}  // namespace ezio::converters
