// SPDX-License-Identifier: GPL-2.0-only
// `eziotrace merge EZTRACE_ARCHIVE KERNEL_ARCHIVE -o OUT`: converters/merge_command.h;
// `eziotrace merge-hosts PART... -o OUT`: converters/hosts/merge_hosts.h.
#include <spdlog/spdlog.h>

#include "analysis/analyzers/check.h"
#include "app/commands.h"
#include "common/command.h"
#include "converters/hosts/merge_hosts.h"
#include "converters/merge_command.h"

namespace ezio::app {

void add_merge_command(CLI::App& app) {
  auto o = std::make_shared<converters::MergeCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "merge", "Merge EZTrace archives with a kernel archive into one aligned OTF2 archive");
  cmd->add_option("EZTRACE_ARCHIVE", o->eztrace,
                  "an EZTrace archive (eztrace_log.otf2), its <prog>_trace directory, or the "
                  "directory holding the <prog>_trace directories")
      ->required();
  cmd->add_option("KERNEL_ARCHIVE", o->kernel, "the kernel archive (eziotrace.otf2)")->required();
  cmd->add_option("-o,--output", o->out, "output directory for the merged archive")->required();
  cmd->add_option("--alignment", o->sidecars,
                  "directory of the preload helper's alignment files (default: "
                  "<EZTrace directory>/eziotrace-alignment)");
  cmd->add_flag("-f,--force", o->force, "replace an existing archive");
  cmd->callback([o] { converters::merge_command(*o); });
}

void add_merge_hosts_command(CLI::App& app) {
  auto o = std::make_shared<converters::MergeHostsOptions>();
  CLI::App* cmd = app.add_subcommand(
      "merge-hosts",
      "Merge archives recorded on several hosts (each with its eziotrace-clock.json) into one "
      "archive on the reference host's timeline");
  cmd->add_option("PART", o->parts,
                  "a host's archive (its directory or .otf2 file), recorded with --clock-ref")
      ->required();
  cmd->add_option("-o,--output", o->out, "output directory for the merged archive")->required();
  cmd->add_flag("-f,--force", o->force, "replace an existing archive");
  cmd->add_flag("--rewrite-events", o->rewrite_events,
                "read and rewrite every part's events (the full merge) instead of linking the "
                "parts' event files into the archive with OTF2 mapping tables and clock offsets");
  auto verbose = std::make_shared<bool>(false);
  cmd->add_flag("-v,--verbose", *verbose,
                "debug messages: how each part was merged (assembled or rewritten, and why)");
  auto no_check = std::make_shared<bool>(false);
  cmd->add_flag("--no-check", *no_check,
                "do not check the result (`eziotrace check`: one more pass over its events)");
  cmd->footer(
      "Prints `eziotrace check`'s summary of the archive. Exit status 4: the archive is partial (a "
      "part missing or unreadable; EZIOTRACE::HOSTS_STATUS says which and why); 3: the check "
      "found violations (messages received before they were sent, inverted nesting).");
  cmd->callback([o, no_check, verbose] {
    if (*verbose) spdlog::set_level(spdlog::level::debug);
    const std::filesystem::path anchor = converters::merge_hosts_command(*o);
    if (*no_check) return;
    // The alignment checked on the result: a wrong clock offset shows as messages received
    // before they were sent between the hosts it concerns.
    const analysis::CheckResult r = analysis::check_archive(anchor);
    for (const std::string& line : analysis::check_summary(r)) spdlog::info("{}", line);
    if (r.violations() && command_status() == 0) command_status() = 3;
  });
}

}  // namespace ezio::app
