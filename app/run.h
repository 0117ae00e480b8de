#pragma once
// `eziotrace [options] [--] command [args...]`: the command runs under EZTrace while the kernel
// layers are recorded; both end up merged in one archive.
#include <CLI/CLI.hpp>
#include <set>
#include <string>
#include <vector>

namespace ezio::recorder {

// command: as for add_record_command().
void add_run_command(CLI::App& app, const std::vector<std::string>& command);
const std::set<std::string>& run_value_options();

}  // namespace ezio::recorder
