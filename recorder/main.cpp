#include <CLI/CLI.hpp>

#include "analysis/commands.h"
#include "common/command.h"
#include "common/error.h"
#include "common/log.h"
#include "converters/commands.h"
#include "recorder/command_split.h"
#include "recorder/record_command.h"

int main(int argc, char** argv) {
  ezio::init_logging(false);
  std::vector<std::string> args(argv, argv + argc);
  // Subcommands that run a command take it from the end of the line, split off before CLI11 sees
  // it, so that the command's own options are left alone.
  ezio::recorder::SplitCommandLine split{args, {}};
  if (args.size() > 1 && args[1] == "record") {
    split = ezio::recorder::split_command_line(args, 2, ezio::recorder::record_value_options());
  }

  CLI::App app{"eziotrace: where an application's I/O time goes, from the call to the disk"};
  app.require_subcommand(1);
  ezio::recorder::add_record_command(app, split.command);
  ezio::converters::add_commands(app);
  ezio::analysis::add_commands(app);
  try {
    // CLI11 takes the words without the program name, last word first.
    std::vector<std::string> words(split.ours.rbegin(), split.ours.rend() - 1);
    app.parse(words);
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
