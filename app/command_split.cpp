// SPDX-License-Identifier: GPL-2.0-only
#include "app/command_split.h"

namespace ezio::app {

SplitCommandLine split_command_line(const std::vector<std::string>& args, size_t first,
                                    const std::set<std::string>& value_options) {
  SplitCommandLine s;
  size_t i = 0;
  for (; i < first && i < args.size(); ++i) s.ours.push_back(args[i]);
  for (; i < args.size(); ++i) {
    const std::string& w = args[i];
    if (w == "--") {
      ++i;
      break;
    }
    if (w.size() < 2 || w[0] != '-') break;
    s.ours.push_back(w);
    if (value_options.count(w) && i + 1 < args.size()) s.ours.push_back(args[++i]);
  }
  s.command.assign(args.begin() + std::min(i, args.size()), args.end());
  return s;
}

}  // namespace ezio::app
