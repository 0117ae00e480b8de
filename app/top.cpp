// SPDX-License-Identifier: GPL-2.0-only
// `eziotrace top`: the node's jobs by I/O, one line each, refreshed every second, from eziotraced's
// metrics (docs/metrics.md). It reads the endpoint any user may read: no root, no BPF.
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <memory>
#include <thread>

#include "app/commands.h"
#include "common/error.h"
#include "recorder/metrics/top_jobs.h"
#include "recorder/metrics/top_source.h"

namespace ezio::app {
namespace {

using namespace recorder::metrics;

struct TopArgs {
  TopSource source;
  std::string sort = "io";
  std::string by = "job";  // or device
  size_t limit = 0;
  double interval = 1;
  unsigned iterations = 0;  // 0: until interrupted
  bool once = false;
  bool json = false;
};

std::string title(const TopArgs& a, size_t lines) {
  char host[256] = "?";
  gethostname(host, sizeof host - 1);
  std::time_t now = std::time(nullptr);
  char when[16];
  std::strftime(when, sizeof when, "%H:%M:%S", std::localtime(&now));
  return fmt::format("eziotrace top — {} on {}, {}, every {:g} s, {} {}{} by {}",
                     describe(a.source), host, when, a.interval, lines, a.by, lines == 1 ? "" : "s",
                     a.sort);
}

void run_top(const TopArgs& a) {
  unsigned frames = a.once ? 1 : a.iterations;
  bool screen = !a.json && frames != 1 && isatty(STDOUT_FILENO);
  TopBy by = a.by == "device" ? TopBy::device : TopBy::job;
  Exposition first = fetch_exposition(a.source);
  // base and last: the two latest samples of different times (a textfile is rewritten only every
  // --metrics-textfile-period: its rates are over that period).
  NodeSample base = parse_exposition(first.text, first.time_s, by), last = base;
  auto period = std::chrono::duration<double>(a.interval);
  for (unsigned i = 0; frames == 0 || i < frames; ++i) {
    std::this_thread::sleep_for(period);
    Exposition e = fetch_exposition(a.source);
    if (e.time_s != last.time_s) {
      base = std::move(last);
      last = parse_exposition(e.text, e.time_s, by);
    }
    std::vector<JobView> jobs = job_views(base, last, a.sort);
    if (a.json) {
      double unix_time =
          std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
              .count();
      fmt::print("{}\n",
                 frame_json(jobs, describe(a.source), last.time_s - base.time_s, unix_time).dump());
    } else {
      std::string head = title(a, jobs.size());
      fmt::print("{}{}{}", screen ? "\033[H\033[J" : "",
                 by == TopBy::device ? format_device_table(jobs, head, a.limit)
                                     : format_table(jobs, head, a.limit),
                 screen ? "" : "\n");
    }
    std::fflush(stdout);
  }
}

}  // namespace

void add_top_command(CLI::App& app) {
  auto a = std::make_shared<TopArgs>();
  CLI::App* cmd = app.add_subcommand(
      "top", "the node's jobs ordered by I/O, per layer, from eziotraced's metrics (no root)");
  cmd->add_option("--metrics", a->source.endpoint,
                  "eziotraced's metrics endpoint, [ADDR:]PORT (its --metrics)")
      ->capture_default_str();
  cmd->add_option("--textfile", a->source.textfile,
                  "read eziotraced's --metrics-textfile FILE instead of the endpoint");
  cmd->add_option("-s,--sort", a->sort, "order of the jobs, by rate")
      ->check(CLI::IsMember(sort_keys()))
      ->capture_default_str();
  cmd->add_option("--by", a->by,
                  "one line per job (a cgroup) or per device (its block requests, page cache "
                  "and VFS bytes, whoever is charged)")
      ->check(CLI::IsMember({"job", "device"}))
      ->capture_default_str();
  cmd->add_option("-n,--limit", a->limit, "show at most N jobs (0: all)");
  cmd->add_option("-d,--interval", a->interval, "seconds between two frames")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();
  auto* iterations =
      cmd->add_option("--iterations", a->iterations, "show N frames, then exit (0: until ^C)")
          ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--once", a->once, "show one frame (the rates over one interval), then exit")
      ->excludes(iterations);
  cmd->add_flag("--json", a->json, "one JSON object a line per frame, for scripts");
  cmd->callback([a] { run_top(*a); });
}

}  // namespace ezio::app
