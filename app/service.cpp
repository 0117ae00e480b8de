// SPDX-License-Identifier: GPL-2.0-only
// `eziotrace service install|status|flight`: sets up eziotraced (docs/service.md), asks it what it
// serves, or adds and removes its flight-recorded jobs (docs/flight-recorder.md).
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <vector>

#include "app/commands.h"
#include "app/service_units.h"
#include "common/error.h"
#include "common/log.h"
#include "recorder/service/client.h"
#include "recorder/service/peer.h"
#include "recorder/service/socket.h"

extern char** environ;

namespace fs = std::filesystem;

namespace ezio::app {
namespace {

using namespace recorder::service;

struct InstallArgs {
  std::string unit_dir = "/etc/systemd/system";
  bool force = false;
  bool start = true;
};

// The wait status of the command.
int run_command(std::vector<std::string> argv) {
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  pid_t pid;
  if (int err = posix_spawnp(&pid, cargv[0], nullptr, nullptr, cargv.data(), environ)) {
    fail("cannot run {}: {}", argv[0], errno_text(err));
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

void run_or_fail(std::vector<std::string> argv) {
  int status = run_command(argv);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fail("{} failed (status {})", fmt::join(argv, " "), status);
  }
}

bool unit_is_active(const std::string& unit) {
  return run_command({"systemctl", "is-active", "--quiet", unit}) == 0;
}

// The unit text with ExecStart naming the eziotraced installed beside this eziotrace.
std::string service_unit_text() {
  fs::path daemon = fs::canonical("/proc/self/exe").parent_path() / "eziotraced";
  if (access(daemon.c_str(), X_OK) != 0)
    fail("no eziotraced beside eziotrace ({})", daemon.string());
  std::string text = kServiceUnit;
  const std::string placeholder = "/usr/local/bin/eziotraced";
  text.replace(text.find(placeholder), placeholder.size(), daemon.string());
  return text;
}

enum class Written { kSame, kNew, kReplaced };

struct Unit {
  fs::path path;
  std::string text;
  Written how = Written::kSame;
};

// What writing the unit would do; one that is there already with other content is a user's: kept
// unless --force.
Written compare_unit(const Unit& u, bool force) {
  std::ifstream in(u.path);
  if (!in) return Written::kNew;
  std::string old((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (old == u.text) return Written::kSame;
  if (!force)
    fail("{} exists with other content: not replacing it (--force does)", u.path.string());
  return Written::kReplaced;
}

void write_unit(const Unit& u) {
  std::string tmp = u.path.string() + ".eziotrace-new";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << u.text;
    if (!out.flush()) fail("cannot write {}", tmp);
  }
  chmod(tmp.c_str(), 0644);
  fs::rename(tmp, u.path);
  spdlog::info("installed {}", u.path.string());
}

// Both units are compared before anything is changed: a refusal leaves the group and every unit
// file as they were, not one unit rewritten and the other refused.
std::vector<Unit> planned_units(const InstallArgs& a) {
  std::vector<Unit> units = {{fs::path(a.unit_dir) / "eziotraced.service", service_unit_text()},
                             {fs::path(a.unit_dir) / "eziotraced.socket", kSocketUnit}};
  for (Unit& u : units) u.how = compare_unit(u, a.force);
  return units;
}

void install(const InstallArgs& a) {
  if (geteuid() != 0) fail("eziotrace service install needs root");
  const std::vector<Unit> units = planned_units(a);
  if (!group_id(kDefaultGroup)) {
    run_or_fail({"groupadd", "--system", kDefaultGroup});
    spdlog::info("created group {}", kDefaultGroup);
  }
  fs::create_directories(a.unit_dir);
  bool systemd = fs::is_directory("/run/systemd/system");
  // A running socket (or service) keeps the settings it started with: a daemon-reload does not
  // rebind the socket nor restart the service.
  bool was_active = systemd && a.start && unit_is_active("eziotraced.socket");
  bool replaced = false;
  for (const Unit& u : units) {
    if (u.how != Written::kSame) write_unit(u);
    replaced |= u.how == Written::kReplaced;
  }
  if (!a.start) return;
  if (!systemd) {
    spdlog::info(
        "systemd is not running here: start `eziotraced` (it serves {} and goes to the "
        "background once ready) from the node's init scripts",
        kDefaultSocket);
    return;
  }
  run_or_fail({"systemctl", "daemon-reload"});
  run_or_fail({"systemctl", "enable", "--now", "eziotraced.socket"});
  spdlog::info("eziotraced.socket enabled and started; add users to group {} to let them record",
               kDefaultGroup);
  if (replaced && was_active) {
    spdlog::warn(
        "eziotraced.socket was running: it keeps its former settings until `systemctl restart "
        "eziotraced.socket` (which also ends eziotraced and the recordings in progress)");
  }
}

// The Slurm jobs whose user or ring the service waits for, by their Slurm id, and those it
// refused with why (the lines above name no job_<id> cgroup not recorded: scripts wait for these).
void print_slurm_starts(const nlohmann::json& slurm) {
  auto id_of = [](const std::string& n) { return n.rfind("job_", 0) == 0 ? n.substr(4) : n; };
  std::vector<std::string> ids;
  for (const auto& name : slurm.value("pending_now", nlohmann::json::array())) {
    ids.push_back(id_of(name.get<std::string>()));
  }
  uint64_t gone = slurm.value("gone_pending", 0ull);
  if (!ids.empty() || gone != 0) {
    fmt::print(
        "  Slurm jobs pending (their user asked from scontrol, or their ring being made): {}{}\n",
        ids.empty() ? "none" : fmt::format("{}", fmt::join(ids, ", ")),
        gone ? fmt::format("; {} ended before their recording began", gone) : "");
  }
  nlohmann::json refused = slurm.value("refused_why", nlohmann::json::object());
  for (const auto& [name, why] : refused.items()) {
    fmt::print("  Slurm job {} not recorded: {}\n", id_of(name), why.get<std::string>());
  }
}

void status(const std::string& socket) {
  nlohmann::json s = ServiceClient(socket).status();
  fmt::print("eziotraced at {}: {} session(s) open, {} connection(s)\n", socket,
             s.value("sessions", 0), s.value("connections", 0));
  if (std::string hook = s.value("metrics_hook", ""); !hook.empty()) {
    fmt::print("  metrics: on, system calls counted by {} ({})\n", hook,
               hook == "fentry" ? "fentry/fexit on their functions"
                                : "the sys_enter/sys_exit tracepoints");
  }
  for (const auto& v : s["visible"]) {
    fmt::print("  session {}: {} (pid {}), ring buffer {} MiB, {}\n", v.value("slot", 0),
               v.value("user", "?"), v.value("pid", 0), v.value("ring_bytes", 0ull) >> 20,
               v.value("tracing", false) ? "recording" : "starting");
  }
  for (const auto& j : s.value("flight", nlohmann::json::array())) {
    fmt::print(
        "  flight-recorded job {} ({}'s): the last {} s, {} events held ({} KiB), {} "
        "dropped to make room{}\n",
        j.value("job", "?"), j.value("owner", "?"), j.value("seconds", 0.0),
        j.value("events", 0ull), j.value("bytes", 0ull) >> 10, j.value("dropped", 0ull),
        j.value("added", false) ? "; added while eziotraced runs" : "");
  }
  if (const auto& sl = s.value("flight_slurm", nlohmann::json()); sl.is_object()) {
    fmt::print(
        "  Slurm jobs of {} ({}): {} flight-recorded, {} added, {} ended, {} not recorded "
        "(no session slot or no user)\n",
        sl.value("dir", "?"), sl.value("watching", false) ? "watched" : "not there yet",
        sl.value("recorded", 0ull), sl.value("added", 0ull), sl.value("removed", 0ull),
        sl.value("refused", 0ull));
    print_slurm_starts(sl);
  }
}

struct FlightArgs {
  std::string socket = kDefaultSocket;
  std::string cgroup;
  std::optional<double> seconds;
  std::optional<uint64_t> mib;
};

void flight_add(const FlightArgs& a) {
  nlohmann::json request{{"cgroup", a.cgroup}};
  if (a.seconds) request["seconds"] = *a.seconds;
  if (a.mib) request["mib"] = *a.mib;
  nlohmann::json j = ServiceClient(a.socket).flight_add(request);
  fmt::print(
      "eziotraced flight-records job {} ({}'s) from now on: the last {} s, at most {} MiB; {} "
      "process(es) there already. A restart of eziotraced forgets it (its configuration is not "
      "changed).\n",
      j.value("job", "?"), j.value("owner", "?"), j.value("seconds", 0.0), j.value("mib", 0ull),
      j.value("processes", 0ull));
}

void flight_remove(const FlightArgs& a) {
  nlohmann::json j = ServiceClient(a.socket).flight_remove({{"cgroup", a.cgroup}});
  fmt::print("eziotraced flight-records job {} no more: its session and kept events are freed\n",
             j.value("job", "?"));
}

void add_flight_commands(CLI::App& service) {
  CLI::App* flight = service.add_subcommand(
      "flight", "add or remove a job eziotraced flight-records, while it runs (root)");
  flight->require_subcommand(1);
  auto a = std::make_shared<FlightArgs>();
  CLI::App* add = flight->add_subcommand(
      "add", "flight-record this cgroup v2 from now on (its path under the cgroup2 mount)");
  add->add_option("cgroup", a->cgroup, "the cgroup, as eziotraced --flight takes it")->required();
  add->add_option("--seconds", a->seconds, "the seconds of events it keeps (eziotraced's default)")
      ->check(CLI::Range(0.1, 86400.0));
  add->add_option("--mib", a->mib, "the memory of its kept events, in MiB (eziotraced's default)")
      ->check(CLI::Range(1, 1 << 20));
  add->add_option("--socket", a->socket, "the service's socket");
  add->callback([a] { flight_add(*a); });
  CLI::App* remove = flight->add_subcommand(
      "remove", "stop flight-recording a job: its path, cgroup id or Slurm job id");
  remove->add_option("job", a->cgroup, "the job, as eziotrace snapshot --job names it")->required();
  remove->add_option("--socket", a->socket, "the service's socket");
  remove->callback([a] { flight_remove(*a); });
}

}  // namespace

void add_service_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("service", "set up or query the recording service eziotraced");
  cmd->require_subcommand(1);
  auto a = std::make_shared<InstallArgs>();
  CLI::App* inst = cmd->add_subcommand(
      "install", "create group eziotrace, install and start the systemd units (root)");
  inst->add_option("--unit-dir", a->unit_dir, "where the units go (default /etc/systemd/system)");
  inst->add_flag("-f,--force", a->force, "replace unit files that differ");
  inst->add_flag("!--no-start", a->start, "install only; do not enable or start the socket");
  inst->callback([a] { install(*a); });
  auto socket = std::make_shared<std::string>(kDefaultSocket);
  CLI::App* st =
      cmd->add_subcommand("status", "the sessions eziotraced serves (yours; all for root)");
  st->add_option("--socket", *socket, "the service's socket");
  st->callback([socket] { status(*socket); });
  add_flight_commands(*cmd);
}

}  // namespace ezio::app
