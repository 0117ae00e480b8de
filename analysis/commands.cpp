#include "analysis/commands.h"

#include "analysis/advise.h"
#include "analysis/files.h"
#include "analysis/latency.h"
#include "analysis/layers.h"
#include "analysis/profile.h"
#include "analysis/report_html.h"

namespace ezio::analysis {
void add_commands(CLI::App& app) {
  add_profile_command(app);
  add_layers_command(app);
  add_files_command(app);
  add_latency_command(app);
  add_advise_command(app);
  add_report_command(app);
}
}  // namespace ezio::analysis
