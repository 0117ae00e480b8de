// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// `eziotrace [options] [--] command [args…]`: separates our options from the command, so that the
// command's own options are never taken for ours and ours are checked strictly.
#include <set>
#include <string>
#include <vector>

namespace ezio::app {

struct SplitCommandLine {
  std::vector<std::string> ours;     // for CLI11, program name first
  std::vector<std::string> command;  // the application and its arguments
};

// Words from index `first` of args on are ours until "--" or the first word that is neither an
// option nor the value of one of value_options.
SplitCommandLine split_command_line(const std::vector<std::string>& args, size_t first,
                                    const std::set<std::string>& value_options);

}  // namespace ezio::app
