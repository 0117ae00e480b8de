// SPDX-License-Identifier: GPL-2.0-only
#include "converters/cluster/user_layers.h"

#include <spdlog/spdlog.h>

#include <set>

#include "common/command.h"
#include "common/error.h"
#include "common/output_dir.h"
#include "converters/clock_reference.h"
#include "converters/eztrace/alignment_capture.h"
#include "converters/eztrace/discovery.h"
#include "converters/eztrace/environment.h"
#include "converters/eztrace/mpi_detect.h"
#include "converters/eztrace/run_merge.h"
#include "converters/eztrace/sidecar.h"
#include "recorder/session/launcher.h"
#include "recorder/session/privileges.h"

namespace fs = std::filesystem;

namespace ezio::converters {

void record_task_with_eztrace(const recorder::RecordOptions& rec,
                              const std::vector<std::string>& modules, const fs::path& trace_dir,
                              const std::string& clock_ref) {
  std::vector<std::string> env = recorder::current_environment();
  fs::path work_path = rec.output;
  work_path += ".eztrace";
  OwnedDir work(work_path, DirKind::work, rec.force);
  EztraceSetup setup = prepare_eztrace(modules_for(modules, rec.command, env), work.dir());
  // Every rank names the job's directory: with one of its own per node, a rank of another node
  // than rank 0's finds no archive directory to write its locations into (docs/cluster.md).
  set_env(setup.env, "EZTRACE_TRACE_DIR", trace_dir.string());
  if (env_value(setup.env, "EZIOTRACE_TRACE_BASE"))
    set_env(setup.env, "EZIOTRACE_TRACE_BASE", trace_dir.string());
  setup.trace_dir = trace_dir;
  recorder::give_to(setup.sidecar_dir, recorder::target_user());

  recorder::RecordOptions kernel = rec;
  kernel.environment = std::move(env);
  kernel.command = eztrace_command(setup, rec.command, kernel.environment);
  kernel.user_command = rec.command;
  kernel.gate_helper = preload_helper_path().string();
  recorder::RecordExtras extras;
  extras.finish = [&setup](const fs::path& staged) {
    fs::copy(setup.sidecar_dir, staged / kAlignmentDirName, fs::copy_options::recursive);
  };
  extras = with_clock_reference(std::move(extras), clock_ref);
  recorder::RecordResult r = recorder::record(kernel, extras);
  recorder::print_summary(r);
  command_status() = r.exit_status;
}

std::vector<fs::path> merge_user_layers(const std::vector<fs::path>& parts,
                                        const fs::path& trace_dir, std::vector<HostPart>& absent) {
  // Each part's ranks (their EZTrace locations in the job's one archive): in another part's
  // merge they are known to be elsewhere, not left out.
  std::vector<std::set<OTF2_LocationRef>> ranks(parts.size());
  for (size_t i = 0; i < parts.size(); ++i) {
    try {
      for (const Sidecar& s : read_sidecars(parts[i] / kAlignmentDirName)) {
        for (const auto& t : s.threads) ranks[i].insert(t.location);
      }
    } catch (const std::exception&) {
      // Its own merge says what is wrong with it; the others then report its ranks.
    }
  }
  std::vector<fs::path> merged;
  for (size_t i = 0; i < parts.size(); ++i) {
    const fs::path& part = parts[i];
    std::set<OTF2_LocationRef> elsewhere;
    for (size_t j = 0; j < parts.size(); ++j) {
      if (j != i) elsewhere.insert(ranks[j].begin(), ranks[j].end());
    }
    fs::path out = part;
    out += ".merged";
    try {
      Staging staging(out, false);
      MergeSummary s = merge_recorded(trace_dir, part, staging.dir(), "", elsewhere);
      fs::copy_file(part / kClockFileName, staging.dir() / kClockFileName);
      staging.publish();
      if (s.report.violations)
        spdlog::error("{}: {} alignment violation(s) between EZTrace's and the kernel's events",
                      part.filename().string(), s.report.violations);
      merged.push_back(out);
    } catch (const std::exception& e) {
      HostPart& p = absent.emplace_back();
      p.given = part;
      p.host = part.filename().string().substr(0, part.filename().string().find('.'));
      p.problem = fmt::format("its EZTrace layers could not be merged: {}", e.what());
    }
  }
  return merged;
}

}  // namespace ezio::converters
