// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The analyzers' subcommands, one file each. They need only the analysis library (no recorder), so
// that tests/support/cli_main.cpp can drive them on a bare command line.
#include <CLI/CLI.hpp>

namespace ezio::app {

void add_profile_command(CLI::App& app);     // profile.cpp
void add_layers_command(CLI::App& app);      // layers.cpp
void add_files_command(CLI::App& app);       // files.cpp
void add_latency_command(CLI::App& app);     // latency.cpp
void add_collective_command(CLI::App& app);  // collective.cpp
void add_datasets_command(CLI::App& app);    // datasets.cpp
void add_advise_command(CLI::App& app);      // advise.cpp
void add_report_command(CLI::App& app);      // report.cpp
void add_check_command(CLI::App& app);       // check.cpp

// All of the above, in the order `eziotrace --help` lists them (analyzers.cpp).
void add_analyzer_commands(CLI::App& app);

}  // namespace ezio::app
