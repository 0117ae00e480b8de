// `eziotrace record [options] [--] command [args...]`: the kernel layers only, no EZTrace.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <optional>

#include "app/commands.h"
#include "app/options.h"
#include "common/command.h"
#include "common/error.h"
#include "converters/eztrace/alignment_capture.h"
#include "converters/eztrace/environment.h"
#include "recorder/session/privileges.h"

namespace ezio::app {
namespace {

// What `eziotrace record` is told: the options it shares with `run`, and whether to keep the
// EZTrace alignment data in the archive (eziotrace merge needs it; done anyway when the command
// runs EZTrace, converters::runs_eztrace). `run` has no such option: it merges right away.
struct RecordCommandArgs {
  RecordArgs shared;
  bool eztrace_alignment = false;
};

// A command that runs EZTrace itself (or --eztrace-alignment): the helper's alignment data goes
// into the archive, so that `eziotrace merge` can align EZTrace's trace later. Not when the
// environment says another eziotrace collects it already.
recorder::RecordExtras eztrace_alignment(
    const RecordCommandArgs& args,
    std::shared_ptr<std::optional<converters::AlignmentCapture>> capture) {
  recorder::RecordExtras extras;
  extras.prepare = [&args, capture](const std::filesystem::path& archive,
                                    std::vector<std::string>& env) {
    bool collected = std::any_of(env.begin(), env.end(), [](const std::string& e) {
      return e.starts_with("EZIOTRACE_SIDECAR_DIR=");
    });
    const recorder::RecordOptions& o = args.shared.record;
    if (collected || !(args.eztrace_alignment || converters::runs_eztrace(o.command, env))) {
      return;
    }
    capture->emplace(archive, env, o.force);
    recorder::give_to((*capture)->dir(), recorder::target_user());  // the application writes it
  };
  extras.finish = [capture](const std::filesystem::path& staged) {
    if (!*capture) return;
    size_t n = (*capture)->store_into(staged);
    spdlog::info("alignment data of {} EZTrace process(es) kept in the archive ({})", n,
                 converters::kAlignmentDirName);
  };
  return extras;
}

}  // namespace

void add_record_command(CLI::App& app, const std::vector<std::string>& command) {
  auto o = std::make_shared<RecordCommandArgs>();
  CLI::App* cmd = app.add_subcommand(
      "record", "record the kernel I/O of a command and its children (no EZTrace)");
  add_record_options(*cmd, o->shared);
  cmd->add_flag("--eztrace-alignment", o->eztrace_alignment,
                "keep the alignment data of EZTrace-traced processes in the archive, for "
                "`eziotrace merge` (automatic when the command runs `eztrace` or preloads "
                "EZTrace)");
  cmd->callback([o, &command] {
    apply_common(o->shared);
    if (command.empty())
      fail("no command given: eziotrace record [options] [--] command [args...]");
    o->shared.record.command = command;
    auto capture = std::make_shared<std::optional<converters::AlignmentCapture>>();
    recorder::RecordResult r = recorder::record(o->shared.record, eztrace_alignment(*o, capture));
    recorder::print_summary(r);
    command_status() = r.exit_status;
  });
}

}  // namespace ezio::app
