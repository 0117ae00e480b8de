#include "app/run.h"

#include <filesystem>

#include "common/command.h"
#include "common/error.h"
#include "common/log.h"
#include "common/output_dir.h"
#include "common/schema/files.h"
#include "converters/eztrace_run.h"
#include "recorder/session/launcher.h"
#include "recorder/session/privileges.h"
#include "recorder/session/record.h"

namespace fs = std::filesystem;

namespace ezio::recorder {
namespace {

struct RunOptions {
  RecordOptions record;
  std::vector<std::string> modules{"posixio"};
  bool keep_parts = false;
};

void run(RunOptions& o) {
  if (o.record.command.empty()) {
    fail("no command given: eziotrace [options] [--] command [args...]");
  }
  fs::path out = output_path(o.record.output.string(), o.record.command.front());
  // Made before anything runs, so that whatever is in the way is refused first.
  Staging staging(out, o.record.force);
  // The parts go away when anything fails, and at the end unless --keep-parts.
  fs::path parts_dir = out;
  parts_dir += ".parts";
  OwnedDir parts_scratch(parts_dir, DirKind::work, o.record.force);
  const fs::path& parts = parts_scratch.dir();
  if (o.keep_parts) parts_scratch.keep();  // kept whatever happens: that is what was asked

  auto setup = converters::prepare_eztrace(o.modules, parts / "eztrace");
  // EZTrace writes its trace from the application's process: under sudo that is the user.
  give_to(parts / "eztrace", target_user());
  RecordOptions kernel = o.record;
  kernel.output = parts / "kernel";
  kernel.force = false;
  kernel.environment = current_environment();
  kernel.command = converters::eztrace_command(setup, o.record.command, kernel.environment);
  RecordResult r = record(kernel);

  auto merged = converters::finish_eztrace(setup, r.archive / schema::kAnchorFile, staging.dir());
  give_to(staging.dir(), target_user());
  staging.publish();
  r.archive = out;
  print_summary(r);
  if (merged.report.processes == 0 || !merged.report.untraced.empty()) {
    spdlog::warn("user level: {}", merged.report.user_level);
  }
  if (o.keep_parts) {
    give_to(parts, target_user());
    spdlog::info("the EZTrace and kernel archives are kept in {}", parts.string());
  }
  spdlog::info("open it in ViTE: vite {}", (out / schema::kAnchorFile).string());
  command_status() = r.exit_status;
}

}  // namespace

const std::set<std::string>& run_value_options() {
  static const std::set<std::string> v = {"-o", "--output", "--ring-buffer", "-t", "--eztrace"};
  return v;
}

void add_run_command(CLI::App& app, const std::vector<std::string>& command) {
  auto o = std::make_shared<RunOptions>();
  auto verbose = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand(
      "run",
      "run a command under EZTrace and record its kernel I/O into one archive (the "
      "default: `eziotrace [options] command` means `eziotrace run [options] command`)");
  cmd->add_option("-o,--output", o->record.output,
                  "archive directory (default: ./<prog>_eziotrace)");
  cmd->add_flag("-f,--force", o->record.force, "replace an existing archive");
  cmd->add_option("--ring-buffer", o->record.ring_buffer_mib,
                  "ring buffer size in MiB (power of two)")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("-t,--eztrace", o->modules,
                  "EZTrace modules, as `eztrace -t` takes them (default: posixio)")
      ->delimiter(',');
  cmd->add_flag("--keep-parts", o->keep_parts,
                "also keep EZTrace's archive and the kernel archive");
  add_wait_children_option(*cmd, o->record);
  cmd->add_flag("-v,--verbose", *verbose, "show libbpf and debug messages");
  cmd->footer("Everything after the options (or after --) is the command and its arguments.");
  cmd->callback([o, verbose, &command] {
    if (*verbose) spdlog::set_level(spdlog::level::debug);
    o->record.command = command;
    run(*o);
  });
}

}  // namespace ezio::recorder
