#include "analysis/commands.h"

#include "analysis/files.h"
#include "analysis/latency.h"
#include "analysis/layers.h"
#include "analysis/profile.h"

namespace ezio::analysis {
void add_commands(CLI::App& app) {
  add_profile_command(app);
  add_layers_command(app);
  add_files_command(app);
  add_latency_command(app);
}
}  // namespace ezio::analysis
