#include "converters/commands.h"

namespace ezio::converters {
void add_commands(CLI::App&) {}
}  // namespace ezio::converters
