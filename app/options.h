// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Options shared between subcommands: `run` (and the default mode) takes every option of
// `record` but --eztrace-alignment (run merges right away: it always has the alignment data),
// declared once here.
#include <CLI/CLI.hpp>
#include <set>
#include <string>
#include <vector>

#include "recorder/session/record.h"

namespace ezio::app {

// What every recording subcommand (`record`, `run`) is told.
struct RecordArgs {
  recorder::RecordOptions record;
  bool verbose = false;
};

// What `eziotrace run` is told: everything `record` is, and how to run EZTrace.
struct RunArgs {
  RecordArgs base;
  std::vector<std::string> modules{"posixio"};
  bool keep_parts = false;
};

// Registers the options `record` and `run` share on cmd.
void add_record_options(CLI::App& cmd, RecordArgs& o);
// The options each task of `eziotrace -- srun ...` is given (converters/cluster/slurm_step.h):
// every recording option of o but the output and --force, which the job's session decides.
std::vector<std::string> task_options(const RecordArgs& o);

// Applies what every recording subcommand does with its RecordArgs before it runs (-v).
void apply_common(const RecordArgs& o);

// The options of cmd that take a value ("-o", "--output", ...), so that split_command_line()
// knows which word after an option is its value, not the command.
std::set<std::string> value_options(const CLI::App& cmd);

}  // namespace ezio::app
