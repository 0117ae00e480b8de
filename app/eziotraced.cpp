// SPDX-License-Identifier: GPL-2.0-only
// eziotraced: the recording service (docs/service.md). Root; loads the BPF programs once and
// serves recording sessions to root and the members of a group over a Unix socket.
#include <signal.h>
#include <spdlog/sinks/syslog_sink.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "common/error.h"
#include "common/log.h"
#include "common/version.h"
#include "recorder/metrics/cgroup_names.h"
#include "recorder/metrics/collector.h"
#include "recorder/metrics/http_server.h"
#include "recorder/metrics/metrics_programs.h"
#include "recorder/service/daemon.h"
#include "recorder/service/flight_recorder.h"
#include "recorder/service/kernel_sessions.h"
#include "recorder/service/socket.h"
#include "recorder/session/privileges.h"

namespace {

using namespace ezio::recorder::service;

struct Args {
  bool foreground = false;
  std::string socket = kDefaultSocket;
  std::string group = kDefaultGroup;
  std::string layers = "all";
  unsigned sessions_per_user = Limits{}.sessions_per_user;
  uint64_t ring_mib_per_user = Limits{}.ring_bytes_per_user >> 20;
  bool verbose = false;
  std::string metrics;           // [ADDR:]PORT, "" for no HTTP endpoint
  std::string metrics_textfile;  // node_exporter textfile, "" for none
  double metrics_textfile_period = 15;
  uint32_t metrics_max_series = 16384;
  uint32_t metrics_latency_every = ezio::recorder::metrics::MetricsConfig{}.latency_every;
  uint32_t metrics_max_mounts = 256;
  std::string metrics_layers = "all";
  FlightConfig flight;
  uint64_t flight_mib = FlightConfig{}.max_bytes >> 20;
  std::vector<std::string> flight_rules;  // METRIC>THRESHOLD:SECONDS
  std::string flight_rule_dir;
  double flight_rule_interval = 600;
};

void add_options(CLI::App& app, Args& a) {
  app.add_flag("--foreground", a.foreground,
               "stay in the foreground, log to stderr (systemd, tests, nodes without systemd)");
  app.add_option("--socket", a.socket, "the socket to serve (default " + a.socket + ")");
  app.add_option("--group", a.group, "the group whose members may record (default eziotrace)");
  app.add_option("--layers", a.layers, "layers to load (default all; see eziotrace record)");
  app.add_option("--max-sessions-per-user", a.sessions_per_user, "recordings at once per user")
      ->check(CLI::Range(1u, 64u));
  app.add_option("--max-ring-mib-per-user", a.ring_mib_per_user,
                 "ring buffer memory per user, in MiB, over all their recordings")
      ->check(CLI::Range(1, 1 << 20));
  app.add_flag("-v,--verbose", a.verbose, "debug messages");
  app.add_option("--metrics", a.metrics,
                 "always-on per-cgroup I/O metrics, served as OpenMetrics over HTTP at "
                 "[ADDR:]PORT/metrics (localhost when no ADDR; docs/metrics.md)")
      ->check(
          [](const std::string& spec) {
            try {
              ezio::recorder::metrics::parse_listen(spec);
              return std::string();
            } catch (const ezio::Error& e) {
              return std::string(e.what());
            }
          },
          "[ADDR:]PORT");
  app.add_option("--metrics-textfile", a.metrics_textfile,
                 "also write the metrics to this file (node_exporter's textfile collector)");
  app.add_option("--metrics-textfile-period", a.metrics_textfile_period,
                 "seconds between two writes of the textfile (default 15)")
      ->check(CLI::Range(0.1, 86400.0));
  app.add_option("--metrics-max-series", a.metrics_max_series,
                 "series the kernel keeps at most (cgroup x operation x device; the rest is "
                 "counted as overflow; default 16384)")
      ->check(CLI::Range(1u, 1u << 24));
  app.add_option("--metrics-latency-every", a.metrics_latency_every,
                 "time one counted system call in N per CPU for the latency histograms (fsync, "
                 "fdatasync, sync_file_range always; 1: every call; counts and bytes stay exact; "
                 "default 16)")
      ->check(CLI::Range(1u, 1u << 20));
  app.add_option("--metrics-max-mounts", a.metrics_max_mounts,
                 "mounts the VFS series tell apart at once (the others are counted under "
                 "mount \"(other)\" and as overflow; one unmounted gives its slot back; "
                 "default 256)")
      ->check(CLI::Range(1u, 1u << 20));
  app.add_option("--metrics-layers", a.metrics_layers,
                 "the layers kept: all (default) or some of syscall,vfs,fs,pagecache,block; the "
                 "others' programs are not loaded")
      ->check(
          [](const std::string& spec) {
            try {
              ezio::recorder::metrics::parse_metrics_layers(spec);
              return std::string();
            } catch (const ezio::Error& e) {
              return std::string(e.what());
            }
          },
          "LAYERS");
  app.add_option("--flight", a.flight.cgroups,
                 "flight-record this cgroup v2 (its path under the cgroup2 mount; repeatable): "
                 "its owner's processes' last seconds, for eziotrace snapshot "
                 "(docs/flight-recorder.md)");
  app.add_option("--flight-slurm", a.flight.slurm_root,
                 "flight-record every Slurm job of the node as its job_<id> cgroup comes and goes "
                 "(cgroup/v2 plugin), owned by the job's user; CGROUP_ROOT: the directory of "
                 "those cgroups under the cgroup2 mount (default " +
                     std::string(kSlurmCgroupRoot) +
                     " or /system.slice/<node>_slurmstepd.scope, whichever exists)")
      ->expected(0, 1);
  app.add_option("--flight-slurm-timeout", a.flight.slurm_timeout,
                 "seconds scontrol may take to name a new Slurm job's user (default 10): it is "
                 "killed then, and the job not recorded; the service serves others meanwhile")
      ->check(CLI::Range(0.1, 3600.0));
  app.add_option("--flight-slurm-scontrol", a.flight.scontrol,
                 "the scontrol that names a Slurm job's user (default scontrol, looked for in "
                 "PATH)");
  app.add_option("--flight-seconds", a.flight.seconds,
                 "the seconds of events a flight-recorded job keeps (default 30)")
      ->check(CLI::Range(0.1, 86400.0));
  app.add_option("--flight-mib", a.flight_mib,
                 "the memory of one job's kept events, in MiB (default 64): the oldest go first")
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("--flight-rule", a.flight_rules,
                 "take a flight-recorded job's snapshot by itself when METRIC>THRESHOLD:SECONDS "
                 "holds (write_p99, read_p99 in seconds, throttled a share; e.g. "
                 "write_p99>0.005:10); repeatable")
      ->check(
          [](const std::string& spec) {
            try {
              parse_flight_rule(spec);
              return std::string();
            } catch (const ezio::Error& e) {
              return std::string(e.what());
            }
          },
          "RULE");
  app.add_option("--flight-rule-dir", a.flight_rule_dir,
                 "where the rules' snapshots go: a directory of the job's owner, who writes them");
  app.add_option("--flight-rule-interval", a.flight_rule_interval,
                 "seconds between two automatic snapshots of a job (default 600)")
      ->check(CLI::Range(1.0, 7 * 86400.0));
  // The same settings from a file, one `option = value` a line (e.g. metrics = "127.0.0.1:9464").
  app.set_config("--config", "", "read these options from an INI/TOML file");
}

// The always-on metrics, when asked for: their programs attached for the service's lifetime.
struct Metrics {
  std::unique_ptr<ezio::recorder::metrics::MetricsPrograms> programs;
  std::unique_ptr<ezio::recorder::metrics::Collector> collector;
  std::unique_ptr<ezio::recorder::metrics::MetricsServer> server;
};

Metrics start_metrics(const Args& a) {
  namespace m = ezio::recorder::metrics;
  Metrics out;
  bool exported = !a.metrics.empty() || !a.metrics_textfile.empty();
  if (!exported && a.flight_rules.empty()) return out;
  m::ServerConfig config;
  config.listen = a.metrics;
  config.textfile = a.metrics_textfile;
  config.textfile_period = std::chrono::milliseconds(int64_t(a.metrics_textfile_period * 1000));
  std::filesystem::path mount = m::cgroup2_mount();
  m::MetricsConfig mc;
  mc.max_series = a.metrics_max_series;
  mc.latency_every = a.metrics_latency_every;
  mc.max_mounts = a.metrics_max_mounts;
  mc.layers = m::parse_metrics_layers(a.metrics_layers);
  out.programs = std::make_unique<m::MetricsPrograms>(mc);
  out.collector = std::make_unique<m::Collector>(*out.programs, mount);
  if (!exported) return out;  // for the flight rules only
  out.server = std::make_unique<m::MetricsServer>(
      config, [c = out.collector.get()](m::Format f) { return c->scrape(f); });
  spdlog::info("metrics of every cgroup under {}{}{}", mount.string(),
               a.metrics.empty() ? "" : fmt::format(", served at port {}", out.server->port()),
               a.metrics_textfile.empty() ? "" : ", written to " + a.metrics_textfile);
  return out;
}

// Away from the terminal, logging to syslog: the parent returns once the child serves.
void daemonize() {
  int ready[2];
  if (pipe(ready) != 0) ezio::fail("pipe: {}", ezio::errno_text(errno));
  pid_t pid = fork();
  if (pid < 0) ezio::fail("fork: {}", ezio::errno_text(errno));
  if (pid > 0) {
    close(ready[1]);
    char c;
    _exit(read(ready[0], &c, 1) == 1 ? 0 : 1);
  }
  close(ready[0]);
  setsid();
  spdlog::set_default_logger(spdlog::syslog_logger_mt("eziotraced", "eziotraced", LOG_PID));
  if (FILE* null = freopen("/dev/null", "r+", stdin)) {
    dup2(fileno(null), 1);
    dup2(fileno(null), 2);
  }
  (void)!write(ready[1], "r", 1);
  close(ready[1]);
}

// The flight rules' settings, their figures read from the metrics' table.
RulesConfig rules_config(const Args& a, const ezio::recorder::metrics::MetricsPrograms* programs) {
  RulesConfig rc;
  if (a.flight_rules.empty()) return rc;
  if (a.flight_rule_dir.empty()) ezio::fail("--flight-rule needs --flight-rule-dir DIR");
  for (const std::string& r : a.flight_rules) rc.rules.push_back(parse_flight_rule(r));
  rc.dir = std::filesystem::absolute(a.flight_rule_dir);
  rc.min_interval = a.flight_rule_interval;
  rc.eziotrace = std::filesystem::read_symlink("/proc/self/exe").parent_path() / "eziotrace";
  rc.socket = std::filesystem::absolute(a.socket).string();
  rc.figures = [programs](uint64_t cgroup) {
    JobFigures f;
    for (const auto& s : programs->read()) {
      if (s.key.cgroup != cgroup || s.key.kind != EZIO_M_KIND_MAIN) continue;
      const auto& v = s.value;
      if (s.key.op == EZIO_M_SC_WRITE || s.key.op == EZIO_M_SC_READ) {
        auto& h = s.key.op == EZIO_M_SC_WRITE ? f.write_hist : f.read_hist;
        for (unsigned i = 0; i < EZIO_M_HIST; ++i) h[i] += v.hist[i];
      } else if (s.key.op == EZIO_M_PC_THROTTLED) {
        f.throttled_ns += v.sum_ns;
      }
    }
    return f;
  };
  return rc;
}

// The flight recorder: its jobs of --flight and --flight-slurm, and those `eziotrace service
// flight add` adds later (it waits for them without a job). Without a cgroup v2 hierarchy there
// are none to add: no recorder, unless jobs are asked for (then the error says why).
std::unique_ptr<FlightRecorder> start_flight(const Args& a, SessionKernel& kernel,
                                             const Metrics& metrics) {
  bool flight_wanted = !a.flight.cgroups.empty() || !a.flight.slurm_root.empty();
  std::filesystem::path mount;
  try {
    mount = ezio::recorder::metrics::cgroup2_mount();
  } catch (const ezio::Error& e) {
    if (flight_wanted) throw;
    spdlog::info("no flight recorder: {}", e.what());
    return nullptr;
  }
  FlightConfig fc = a.flight;
  fc.max_bytes = a.flight_mib << 20;
  fc.rules = rules_config(a, metrics.programs.get());
  return std::make_unique<FlightRecorder>(kernel, fc, mount);
}

void serve(const Args& a) {
  ezio::recorder::check_recording_privileges();
  auto group = group_id(a.group);
  if (!group) {
    ezio::fail(
        "there is no group {}: create it (eziotrace service install does) or name another "
        "with --group",
        a.group);
  }
  DaemonConfig config;
  config.group = *group;
  config.limits.sessions_per_user = a.sessions_per_user;
  config.limits.ring_bytes_per_user = a.ring_mib_per_user << 20;
  signal(SIGPIPE, SIG_IGN);
  ezio::UniqueFd sock = activated_socket();
  bool activated = bool(sock);
  if (!activated) sock = listen_at(a.socket, *group);
  std::unique_ptr<SessionKernel> kernel = load_kernel_sessions(a.layers);
  Metrics metrics = start_metrics(a);
  std::unique_ptr<FlightRecorder> flight = start_flight(a, *kernel, metrics);
  if (metrics.programs) {
    config.metrics_hook =
        ezio::recorder::metrics::syscall_hook_name(metrics.programs->syscall_hook());
  }
  Daemon daemon(*kernel, config);
  daemon.set_flight(flight.get());
  spdlog::info("serving {} for root and group {}", activated ? "systemd's socket" : a.socket,
               a.group);
  if (a.foreground) {
    std::printf("eziotraced: ready\n");
    std::fflush(stdout);
  } else {
    daemonize();
  }
  if (metrics.server) metrics.server->start();  // after the fork: its thread would not survive it
  daemon.run(sock.get());
  if (!activated) unlink(a.socket.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  ezio::init_logging(false);
  spdlog::default_logger()->set_pattern("eziotraced: %^%v%$");
  CLI::App app{"eziotraced: the eziotrace recording service (root)", "eziotraced"};
  app.set_version_flag("--version", ezio::version_line("eziotraced"));
  Args a;
  add_options(app, a);
  try {
    app.parse(argc, argv);
    // --flight-slurm alone (or `flight-slurm = ""`): Slurm's own directory.
    if (app.count("--flight-slurm") && a.flight.slurm_root.empty()) {
      a.flight.slurm_root = kSlurmCgroupRoot;
    }
    if (a.verbose) spdlog::set_level(spdlog::level::debug);
    serve(a);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 2;
  } catch (const ezio::Error& e) {
    spdlog::error("{}", e.what());
    return e.exit_code();
  } catch (const std::exception& e) {
    spdlog::error("internal error: {}", e.what());
    return 70;
  }
  return 0;
}
