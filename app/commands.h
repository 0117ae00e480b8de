// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The subcommands of eziotrace, one file each (the analyzers' in app/analyzers.h). command: the
// application's words, split off the command line by split_command_line() before CLI11 parses
// ours; it is read when the subcommand runs, so it may be filled after these calls.
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace ezio::app {

void add_record_command(CLI::App& app, const std::vector<std::string>& command);  // record.cpp
void add_run_command(CLI::App& app, const std::vector<std::string>& command);     // run.cpp
void add_probes_command(CLI::App& app);                                           // probes.cpp
void add_merge_command(CLI::App& app);                                            // merge.cpp
void add_merge_hosts_command(CLI::App& app);                                      // merge.cpp
void add_export_command(CLI::App& app);                                           // export.cpp
void add_view_command(CLI::App& app);                                             // view.cpp
void add_service_command(CLI::App& app);                                          // service.cpp
void add_clock_command(CLI::App& app);                                            // clock.cpp
void add_top_command(CLI::App& app);                                              // top.cpp
void add_snapshot_command(CLI::App& app);                                         // snapshot.cpp

}  // namespace ezio::app
