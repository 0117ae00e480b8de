// SPDX-License-Identifier: GPL-2.0-only
// `eziotrace probes`: the hook each layer would use on this kernel, and with -v every hook tried.
#include <fmt/format.h>

#include <memory>

#include "app/commands.h"
#include "recorder/core/recording_info.h"
#include "recorder/probe/probe.h"
#include "recorder/probe/probe_kernel.h"

namespace ezio::app {

void add_probes_command(CLI::App& app) {
  auto verbose = std::make_shared<bool>(false);
  CLI::App* cmd =
      app.add_subcommand("probes", "show, for this kernel, the hook each layer would use");
  cmd->add_flag("-v,--verbose", *verbose, "also list every hook tried and why it failed");
  cmd->callback([verbose] {
    using namespace ezio::recorder;
    ProbePlan plan = plan_probes(all_layers());
    std::string out = fmt::format("{:<10} {:<9} {}\n", "layer", "accuracy", "hook");
    for (unsigned l = 0; l < EZIO_LAYER_COUNT; ++l) {
      if (l == EZIO_LAYER_PROCESS) continue;
      const auto& p = plan.layers[l];
      out += fmt::format("{:<10} {:<9} {}\n", layer_name(l), p.accuracy, p.hook);
    }
    if (!denied_hook_kinds().empty()) {
      out += fmt::format("\nhook kinds denied by EZIOTRACE_DENY_HOOKS (test aid): {}\n",
                         fmt::join(denied_hook_kinds(), ","));
    }
    if (*verbose) {
      out += "\nhooks tried:\n";
      for (const auto& [layer, t] : plan.trials) {
        out += fmt::format("  {:<10} {:<40} {}\n", layer_name(layer), t.hook,
                           t.ok ? "ok" : "no: " + t.why);
      }
    }
    fmt::print("{}", out);
  });
}

}  // namespace ezio::app
