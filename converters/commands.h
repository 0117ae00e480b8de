#pragma once
#include <CLI/CLI.hpp>

namespace ezio::converters {
// Registers this module's subcommands on the eziotrace command line.
void add_commands(CLI::App& app);
}  // namespace ezio::converters
