// SPDX-License-Identifier: GPL-2.0-only
#include "converters/cluster/slurm_step.h"

#include <fmt/ranges.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <thread>

#include "common/command.h"
#include "common/error.h"
#include "common/output_dir.h"
#include "common/schema/files.h"
#include "converters/clock_reference.h"
#include "converters/cluster/node_session.h"
#include "converters/cluster/srun_line.h"
#include "converters/cluster/user_layers.h"
#include "converters/hosts/merge_hosts.h"
#include "recorder/core/clock_sync.h"
#include "recorder/session/launcher.h"
#include "recorder/session/privileges.h"
#include "recorder/session/signals.h"

namespace fs = std::filesystem;

namespace ezio::converters {
namespace {

std::string this_host() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) fail("gethostname: {}", errno_text(errno));
  return name;
}

// srun [its options] env EZIOTRACE_SESSION=... eziotrace SUB [options] -- program [args...].
std::vector<std::string> task_command(const SlurmStepOptions& o, const NodeSession& session) {
  SrunLine line = split_srun(o.record.command);
  std::vector<std::string> cmd = line.launcher;
  if (cmd.back() == "--") cmd.pop_back();
  std::vector<std::string> recording = task_recording(o, session);
  cmd.insert(cmd.end(), recording.begin(), recording.end());
  cmd.insert(cmd.end(), line.program.begin(), line.program.end());
  return cmd;
}

bool exists_name(const fs::path& dir, const std::string& name) {
  std::error_code ec;
  return fs::exists(dir / name, ec);
}

// The parts the tasks said they started (their .started markers), each once published or failed,
// waited for up to wait_s; a part still missing then is returned in `absent`, with why.
std::vector<fs::path> collect_parts(const fs::path& dir, double wait_s,
                                    std::vector<HostPart>& absent) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string f = e.path().filename().string();
    if (f.ends_with(kStartedSuffix))
      names.push_back(f.substr(0, f.size() - std::strlen(kStartedSuffix)));
  }
  std::sort(names.begin(), names.end());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait_s);
  std::vector<fs::path> parts;
  for (const auto& n : names) {
    auto ready = [&] {
      return exists_name(dir, n + "/" + std::string(kClockFileName)) ||
             exists_name(dir, n + kFailedSuffix);
    };
    while (!ready() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    if (exists_name(dir, n + "/" + std::string(kClockFileName))) {
      parts.push_back(dir / n);
      continue;
    }
    HostPart& p = absent.emplace_back();
    p.given = dir / n;
    p.host = n.substr(0, n.find('.'));
    std::ifstream failed(dir / (n + kFailedSuffix));
    std::string why;
    std::getline(failed, why);
    p.problem = !why.empty() ? "its recording failed: " + why
                             : fmt::format(
                                   "its recording started but wrote no part within {} s "
                                   "of the step's end (the node or its eziotrace died?)",
                                   wait_s);
  }
  return parts;
}

}  // namespace

StepEnd run_step(const std::vector<std::string>& cmd) {
  spdlog::debug("the step: {}", fmt::join(cmd, " "));
  recorder::SignalForwarding signals;
  recorder::Launcher srun(cmd, recorder::current_environment(), recorder::target_user());
  srun.release();
  for (;;) {
    if (int sig = signals.take()) srun.signal(sig);
    if (auto status = srun.poll_exit()) {
      StepEnd end{*status, ""};
      // One SIGINT that srun took as a request for its tasks' state ended nothing.
      if (int sig = signals.first(); sig && *status != 0) {
        end.interrupted = fmt::format("SIG{} to eziotrace during the step", sigabbrev_np(sig));
      }
      return end;
    }
    pollfd p{srun.exit_fd(), POLLIN, 0};
    ::poll(&p, srun.exit_fd() < 0 ? 0 : 1, 200);
  }
}

void slurm_step_command(const SlurmStepOptions& o) {
  const SrunLine line = split_srun(o.record.command);  // refused before anything is made
  session_step_command(o, line.program.front(),
                       [&o](const NodeSession& s) { return task_command(o, s); });
}

void session_step_command(const SlurmStepOptions& o, const std::string& program,
                          const std::function<std::vector<std::string>(const NodeSession&)>& step) {
  const recorder::RecordOptions& rec = o.record;
  const fs::path out = output_path(rec.output.string(), program);
  check_output(out, rec.force);
  fs::path parts_path = out;
  parts_path += ".parts";
  OwnedDir parts(parts_path, DirKind::work, rec.force);
  recorder::give_to(parts.dir(), recorder::target_user());  // the tasks write there
  const bool user_layers = o.subcommand == "run";
  const fs::path trace_dir = parts.dir() / kJobEztraceDir;
  if (user_layers) {  // EZTrace's one archive of the job (user_layers.h), written by the ranks
    fs::create_directory(trace_dir);
    recorder::give_to(trace_dir, recorder::target_user());
  }

  recorder::ClockServer clock(0);
  std::jthread serving([&clock] { clock.serve(); });
  const NodeSession session{parts.dir(), fmt::format("{}:{}", this_host(), clock.port())};
  const StepEnd end = run_step(step(session));
  const int status = end.status;
  std::vector<HostPart> absent;
  std::vector<fs::path> found = collect_parts(parts.dir(), o.part_wait_s, absent);
  clock.stop();
  if (user_layers) found = merge_user_layers(found, trace_dir, absent);
  if (found.empty() && absent.empty())
    fail("{} exited {} and no task started a recording: nothing to merge", rec.command.front(),
         status);

  Staging staging(out, rec.force);
  HostsReport r = merge_hosts(found, staging.dir(), absent, end.interrupted);
  staging.publish();
  recorder::give_to(out, recorder::target_user());
  spdlog::info("{} host(s) merged, {} events ({} part(s) assembled, {} rewritten): {}", r.hosts,
               r.events, r.assembled, r.rewritten,
               (out / (std::string(schema::kArchiveName) + ".otf2")).string());
  if (r.partial()) {
    parts.keep();
    spdlog::warn("the archive is {}; the parts are kept in {}", r.status, parts.dir().string());
  } else {
    parts.remove();
  }
  command_status() = status != 0 ? status : (r.partial() ? 4 : 0);
}

std::vector<std::string> task_recording(const SlurmStepOptions& o, const NodeSession& session) {
  std::vector<std::string> words = {"/usr/bin/env",
                                    std::string(kSessionEnv) + "=" + session_value(session),
                                    fs::read_symlink("/proc/self/exe").string(), o.subcommand};
  words.insert(words.end(), o.task_options.begin(), o.task_options.end());
  words.push_back("--");
  return words;
}

}  // namespace ezio::converters
