#pragma once
#include <CLI/CLI.hpp>

namespace ezio::analysis {
// Registers this module's subcommands on the eziotrace command line.
void add_commands(CLI::App& app);
}  // namespace ezio::analysis
