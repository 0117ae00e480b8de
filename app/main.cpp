// SPDX-License-Identifier: GPL-2.0-only
#include <sys/resource.h>

#include <CLI/CLI.hpp>

#include "app/analyzers.h"
#include "app/command_split.h"
#include "app/commands.h"
#include "app/options.h"
#include "common/command.h"
#include "common/error.h"
#include "common/log.h"
#include "common/version.h"

namespace {

// `eziotrace ./app` is `eziotrace run ./app`: the subcommand is made explicit (not before the
// program's own flags).
void insert_default_subcommand(CLI::App& app, std::vector<std::string>& args) {
  const bool own_flag =
      args.size() > 1 && (args[1] == "-h" || args[1] == "--help" || args[1] == "--version");
  auto is_subcommand = [&app](const std::string& word) {
    for (const CLI::App* sub : app.get_subcommands({})) {
      if (sub->check_name(word)) return true;
    }
    return false;
  };
  if (args.size() > 1 && !own_flag && !is_subcommand(args[1])) {
    args.insert(args.begin() + 1, "run");
  }
}

// The subcommands: when the first word names one that runs a command, that one alone (a
// recording needs nothing else, and setting up the others' options delays the recorded
// application's start: docs/costs.md); otherwise all of them.
void add_commands(CLI::App& app, const std::string& first, std::vector<std::string>& command) {
  if (first != "record") ezio::app::add_run_command(app, command);
  if (first != "run") ezio::app::add_record_command(app, command);
  if (first == "record" || first == "run") return;
  ezio::app::add_probes_command(app);
  ezio::app::add_merge_command(app);
  ezio::app::add_merge_hosts_command(app);
  ezio::app::add_export_command(app);
  ezio::app::add_view_command(app);
  ezio::app::add_service_command(app);
  ezio::app::add_clock_command(app);
  ezio::app::add_top_command(app);
  ezio::app::add_snapshot_command(app);
  ezio::app::add_analyzer_commands(app);
}

// With -v: this process's own peak memory. The peak that wait4() gives a parent also covers the
// processes this one waited for (the application, whose own memory, EZTrace's buffers included,
// grows with its run), so it cannot tell the recorder's and merge's memory apart.
void log_own_peak_memory() {
  rusage self{};
  if (getrusage(RUSAGE_SELF, &self) == 0) {
    spdlog::debug("eziotrace's own peak memory: {} KiB (the application's not included)",
                  self.ru_maxrss);
  }
}

}  // namespace

int main(int argc, char** argv) {
  ezio::init_logging(false);
  std::vector<std::string> args(argv, argv + argc);
  ezio::app::SplitCommandLine split{args, {}};

  CLI::App app{"eziotrace: where an application's I/O time goes, from the call to the disk",
               "eziotrace"};
  app.require_subcommand(1);
  app.set_version_flag("--version", ezio::version_line("eziotrace"));
  app.footer("eziotrace [run options] [--] command [args...] is `eziotrace run ...`.");
  add_commands(app, args.size() > 1 ? args[1] : "", split.command);
  insert_default_subcommand(app, args);
  // Subcommands that run a command take it from the end of the line, split off before CLI11 sees
  // it, so that the command's own options are left alone.
  if (args.size() > 1 && (args[1] == "record" || args[1] == "run")) {
    split = ezio::app::split_command_line(args, 2,
                                          ezio::app::value_options(*app.get_subcommand(args[1])));
  }
  try {
    // CLI11 takes the words without the program name, last word first.
    std::vector<std::string> words(split.ours.rbegin(), split.ours.rend() - 1);
    app.parse(words);
    log_own_peak_memory();
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 2;  // usage errors
  } catch (const ezio::Error& e) {
    spdlog::error("{}", e.what());
    return e.exit_code();
  } catch (const std::exception& e) {
    spdlog::error("internal error: {}", e.what());
    return 70;  // EX_SOFTWARE
  }
  return ezio::command_status();
}
