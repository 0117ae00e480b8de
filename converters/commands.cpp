#include "converters/commands.h"

namespace ezio::converters {
void add_merge_command(CLI::App& app);    // merge_command.cpp
void add_export_commands(CLI::App& app);  // timeline/export_command.cpp

void add_commands(CLI::App& app) {
  add_merge_command(app);
  add_export_commands(app);
}
}  // namespace ezio::converters
