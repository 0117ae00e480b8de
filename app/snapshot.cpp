// SPDX-License-Identifier: GPL-2.0-only
// `eziotrace snapshot --job ID -o DIR`: the last seconds eziotraced's flight recorder kept of a
// job, written as an ordinary archive (docs/flight-recorder.md).
#include "recorder/session/snapshot.h"

#include <fmt/format.h>

#include <memory>

#include "app/commands.h"
#include "common/log.h"
#include "common/schema/files.h"
#include "recorder/service/socket.h"

namespace ezio::app {

void add_snapshot_command(CLI::App& app) {
  auto o = std::make_shared<recorder::SnapshotOptions>();
  o->socket = recorder::service::kDefaultSocket;
  CLI::App* cmd = app.add_subcommand(
      "snapshot",
      "write the last seconds eziotraced's flight recorder kept of a job (yours; any "
      "for root) as an archive");
  cmd->add_option("--job", o->job,
                  "the job: its cgroup path as eziotraced --flight names it, its cgroup id, or "
                  "Slurm's job id")
      ->required();
  cmd->add_option("-o,--output", o->output, "the archive's directory (default snapshot_eziotrace)");
  cmd->add_option("--seconds", o->seconds, "the last SECONDS only (default: all that is kept)")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("-f,--force", o->force, "replace an existing archive directory");
  cmd->add_option("--socket", o->socket, "the service's socket");
  cmd->callback([o] {
    recorder::SnapshotResult r = recorder::take_snapshot(*o);
    const auto& w = *r.info.snapshot;
    spdlog::info(
        "snapshot of job {}: {} events, {:.3f} s ({} events dropped to make room{})\narchive: {}",
        w.job, r.events, (w.end_ns - w.start_ns) / 1e9, w.dropped,
        w.start_ns > w.asked_start_ns ? ": the window starts later than asked" : "",
        (r.archive / schema::kAnchorFile).string());
  });
}

}  // namespace ezio::app
