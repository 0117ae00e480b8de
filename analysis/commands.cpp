#include "analysis/commands.h"

namespace ezio::analysis {
void add_commands(CLI::App&) {}
}  // namespace ezio::analysis
