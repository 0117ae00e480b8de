#pragma once
#include <CLI/CLI.hpp>
#include <cstdint>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "recorder/archive/kernel_archive.h"
#include "recorder/archive/recording_info.h"

namespace ezio::recorder {

struct RecordOptions {
  std::filesystem::path output;  // empty: default_output(command[0])
  bool force = false;
  uint64_t ring_buffer_mib = 32;
  std::string layers = "all";  // --layers (recorder/probe.h parse_layers)
  bool probe_cache = true;     // false: --no-probe-cache (recorder/kernel_cache.h)
  std::vector<std::string> command;
  std::vector<std::string> environment;  // empty: the recorder's own
  // Keep the EZTrace alignment data in the archive (eziotrace merge needs it). Done anyway when
  // the command runs EZTrace (converters::runs_eztrace).
  bool eztrace_alignment = false;
  // --wait-children: how long descendants that outlive the command are still recorded.
  double wait_children_s = 5;
};

struct RecordResult {
  int exit_status = 0;  // the application's, as a shell reports it
  std::filesystem::path archive;
  RecordingInfo info;
  ArchiveSummary summary;
};

// Runs the command under the kernel recorder and writes the archive.
RecordResult record(const RecordOptions& options);
void print_summary(const RecordResult& result);
// command: the application's words, split off the command line by split_command_line(); it is
// read when the subcommand runs, so it may be filled after this call.
void add_record_command(CLI::App& app, const std::vector<std::string>& command);
// --wait-children[=SECONDS], for `record` and the merged mode alike.
void add_wait_children_option(CLI::App& cmd, RecordOptions& o);
// Options of `record` that take a value (for split_command_line).
const std::set<std::string>& record_value_options();

}  // namespace ezio::recorder
