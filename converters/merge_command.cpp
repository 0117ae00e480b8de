#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>

#include "common/command.h"
#include "common/error.h"
#include "converters/commands.h"
#include "converters/eztrace_run.h"

namespace ezio::converters {
namespace {

// The output directory, made by this merge: removed again unless the merge completed, so that a
// failed merge leaves nothing where the archive was to be.
class NewOutput {
 public:
  explicit NewOutput(std::filesystem::path dir) : dir_(std::move(dir)) {
    std::error_code ec;
    if (std::filesystem::exists(std::filesystem::symlink_status(dir_, ec))) {
      fail("{} already exists; remove it or choose another with -o", dir_.string());
    }
  }
  ~NewOutput() {
    std::error_code ec;
    if (!done_) std::filesystem::remove_all(dir_, ec);
  }
  NewOutput(const NewOutput&) = delete;
  NewOutput& operator=(const NewOutput&) = delete;
  void done() { done_ = true; }

 private:
  std::filesystem::path dir_;
  bool done_ = false;
};

}  // namespace

void add_merge_command(CLI::App& app) {
  struct Options {
    std::string eztrace, kernel, out, sidecars;
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
  cmd->add_option("-o,--output", opts->out, "output directory for the merged archive (new)")
      ->required();
  cmd->add_option("--alignment", opts->sidecars,
                  "directory of the preload helper's alignment files (default: "
                  "<EZTrace directory>/eziotrace-alignment)");
  cmd->callback([opts] {
    std::filesystem::path out = std::filesystem::absolute(opts->out);
    NewOutput output(out);
    MergeSummary s = merge_recorded(opts->eztrace, opts->kernel, out, opts->sidecars);
    output.done();
    spdlog::info("merged archive: {}", s.anchor.string());
    command_status() = s.report.violations ? 3 : 0;
  });
}

}  // namespace ezio::converters
