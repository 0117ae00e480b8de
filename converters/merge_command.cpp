#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>

#include "common/command.h"
#include "common/output_dir.h"
#include "converters/commands.h"
#include "converters/eztrace/run_merge.h"

namespace ezio::converters {
void add_merge_command(CLI::App& app) {
  struct Options {
    std::string eztrace, kernel, out, sidecars;
    bool force = false;
  };
  auto opts = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "merge", "Merge EZTrace archives with a kernel archive into one aligned OTF2 archive");
  cmd->add_option("EZTRACE_ARCHIVE", opts->eztrace,
                  "an EZTrace archive (eztrace_log.otf2), its <prog>_trace directory, or the "
                  "directory holding the <prog>_trace directories")
      ->required();
  cmd->add_option("KERNEL_ARCHIVE", opts->kernel, "the kernel archive (eziotrace.otf2)")
      ->required();
  cmd->add_option("-o,--output", opts->out, "output directory for the merged archive")->required();
  cmd->add_option("--alignment", opts->sidecars,
                  "directory of the preload helper's alignment files (default: "
                  "<EZTrace directory>/eziotrace-alignment)");
  cmd->add_flag("-f,--force", opts->force, "replace an existing archive");
  cmd->callback([opts] {
    std::filesystem::path out = output_path(opts->out, "");
    Staging staging(out, opts->force);
    MergeSummary s = merge_recorded(opts->eztrace, opts->kernel, staging.dir(), opts->sidecars);
    staging.publish();
    spdlog::info("merged archive: {}", (out / s.anchor.filename()).string());
    command_status() = s.report.violations ? 3 : 0;
  });
}

}  // namespace ezio::converters
