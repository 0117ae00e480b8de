// SPDX-License-Identifier: GPL-2.0-only
#include "converters/run_command.h"

#include <spdlog/spdlog.h>

#include <filesystem>
#include <thread>

#include "common/command.h"
#include "common/error.h"
#include "common/log.h"
#include "common/output_dir.h"
#include "common/schema/files.h"
#include "converters/clock_reference.h"
#include "converters/eztrace/discovery.h"
#include "converters/eztrace/environment.h"
#include "converters/eztrace/mpi_detect.h"
#include "converters/eztrace/run_merge.h"
#include "converters/merge/event_store.h"
#include "recorder/session/archive_output.h"
#include "recorder/session/launcher.h"
#include "recorder/session/privileges.h"
#include "recorder/session/record.h"

namespace fs = std::filesystem;

namespace ezio::converters {
namespace {

// The merged mode's exit status: the application's when it failed, else 3 when the merge found
// alignment violations (as `eziotrace merge` exits), else 0.
int run_status(int application_status, const MergeReport& merge) {
  if (application_status != 0) return application_status;
  return merge.violations ? 3 : 0;
}

}  // namespace

void run_command(const RunCommandOptions& o) {
  const recorder::RecordOptions& rec = o.record;
  if (rec.command.empty()) fail("no command to run");
  // The kernel side's teardown (record.h), joined last: it overlaps the merge and the removal of
  // the parts.
  std::jthread teardown;
  recorder::ArchiveOutput output(rec.output, rec.command.front(), rec.force);
  const fs::path& out = output.path();
  // The parts go away when anything fails, and at the end unless --keep-parts.
  fs::path parts_dir = out;
  parts_dir += ".parts";
  OwnedDir parts_scratch(parts_dir, DirKind::work, rec.force);
  const fs::path& parts = parts_scratch.dir();
  if (o.keep_parts) parts_scratch.keep();  // kept whatever happens: that is what was asked

  // The MPI module follows the application's MPI (checked before anything runs).
  std::vector<std::string> command_env = recorder::current_environment();
  auto setup = prepare_eztrace(modules_for(o.modules, rec.command, command_env), parts / "eztrace");
  // EZTrace writes its trace from the application's process: under sudo that is the user.
  recorder::give_to(parts / "eztrace", recorder::target_user());
  recorder::RecordOptions kernel = rec;
  kernel.output = parts / "kernel";
  kernel.force = false;
  // Read back by the merge (its definitions, and the event counts the recorder's copy must match),
  // then removed: only a kept one is read back on its own.
  kernel.read_back = o.keep_parts;
  kernel.environment = std::move(command_env);
  kernel.command = eztrace_command(setup, rec.command, kernel.environment);
  kernel.user_command = rec.command;  // what the report shows, whatever the launcher was given
  // Its gate lets EZTrace start up while the kernel side loads (docs/merge.md, Start-up).
  kernel.gate_helper = preload_helper_path().string();
  // The kernel events reach the merge as the recorder writes them: the merge does not decode the
  // kernel archive again once the application has ended (docs/merge.md). Unless the part is kept,
  // that copy is the only one: each event is encoded once, into the merge's store, not also into
  // the part's OTF2 event files, which nothing would read.
  auto kernel_events = std::make_unique<EventStore>(parts);
  recorder::RecordExtras extras;
  if (!o.clock_ref.empty()) extras = with_clock_reference(std::move(extras), o.clock_ref);
  extras.tap = kernel_events.get();
  extras.tap_only = !o.keep_parts;
  recorder::RecordResult r = recorder::record(kernel, extras);
  teardown = std::move(r.teardown);

  auto merged = finish_eztrace(setup, r.archive / schema::kAnchorFile, output.staged(),
                               std::move(kernel_events));
  if (!o.clock_ref.empty()) {  // written into the kernel archive, which goes away
    fs::copy_file(r.archive / kClockFileName, output.staged() / kClockFileName);
  }
  // The parts are read: removed while the merged archive is read back and published.
  std::jthread removing_parts([&parts_scratch] { parts_scratch.remove(); });
  output.publish(recorder::target_user());
  r.archive = out;
  recorder::print_summary(r);
  if (!merged.report.status.empty()) spdlog::warn("status: {}", merged.report.status);
  if (merged.report.user_level != "complete") {
    spdlog::warn("user level: {}", merged.report.user_level);
  }
  if (o.keep_parts) {
    recorder::give_to(parts, recorder::target_user());
    spdlog::info("the EZTrace and kernel archives are kept in {}", parts.string());
  }
  spdlog::info("open it in ViTE: vite {}", (out / schema::kAnchorFile).string());
  command_status() = run_status(r.exit_status, merged.report);
}

}  // namespace ezio::converters
