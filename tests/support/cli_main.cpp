// SPDX-License-Identifier: GPL-2.0-only
// Test driver: the analyzer subcommands on a bare command line, with the same error contract as
// the eziotrace program (message on stderr, non-zero exit), so that tests do not depend on the
// recorder being buildable.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "app/analyzers.h"
#include "common/command.h"
#include "common/error.h"
#include "common/log.h"

int main(int argc, char** argv) {
  CLI::App app{"eziotrace analyzers (test driver)", "eziotrace"};
  app.require_subcommand(1);
  ezio::app::add_analyzer_commands(app);
  try {
    ezio::init_logging(false);
    app.parse(argc, argv);
    return ezio::command_status();
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const ezio::Error& e) {
    std::fprintf(stderr, "eziotrace: %s\n", e.what());
    return e.exit_code();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "eziotrace: internal error: %s\n", e.what());
    return 70;
  }
}
