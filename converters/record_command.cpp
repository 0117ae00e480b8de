// SPDX-License-Identifier: GPL-2.0-only
#include "converters/record_command.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <optional>

#include "common/command.h"
#include "converters/clock_reference.h"
#include "converters/eztrace/alignment_capture.h"
#include "converters/eztrace/environment.h"
#include "recorder/session/privileges.h"

namespace ezio::converters {
namespace {

// A command that runs EZTrace itself (or --eztrace-alignment): the helper's alignment data goes
// into the archive, so that `eziotrace merge` can align EZTrace's trace later. Not when the
// environment says another eziotrace collects it already.
recorder::RecordExtras eztrace_alignment(const RecordCommandOptions& args,
                                         std::shared_ptr<std::optional<AlignmentCapture>> capture) {
  recorder::RecordExtras extras;
  extras.prepare = [&args, capture](const std::filesystem::path& archive,
                                    std::vector<std::string>& env) {
    bool collected = std::any_of(env.begin(), env.end(), [](const std::string& e) {
      return e.starts_with("EZIOTRACE_SIDECAR_DIR=");
    });
    const recorder::RecordOptions& o = args.record;
    if (collected || !(args.eztrace_alignment || runs_eztrace(o.command, env))) {
      return;
    }
    capture->emplace(archive, env, o.force);
    recorder::give_to((*capture)->dir(), recorder::target_user());  // the application writes it
  };
  extras.finish = [capture](const std::filesystem::path& staged) {
    if (!*capture) return;
    size_t n = (*capture)->store_into(staged);
    spdlog::info("alignment data of {} EZTrace process(es) kept in the archive ({})", n,
                 kAlignmentDirName);
  };
  return extras;
}

}  // namespace

void record_command(const RecordCommandOptions& o) {
  auto capture = std::make_shared<std::optional<AlignmentCapture>>();
  recorder::RecordExtras extras = eztrace_alignment(o, capture);
  if (!o.clock_ref.empty()) extras = with_clock_reference(std::move(extras), o.clock_ref);
  recorder::RecordResult r = recorder::record(o.record, extras);
  recorder::print_summary(r);
  command_status() = r.exit_status;
}

}  // namespace ezio::converters
