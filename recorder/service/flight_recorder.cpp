// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/service/flight_recorder.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <sstream>

#include "common/error.h"
#include "common/log.h"
#include "recorder/core/recording_info.h"
#include "recorder/load/ring_reader.h"
#include "recorder/metrics/cgroup_names.h"
#include "recorder/service/protocol.h"

namespace fs = std::filesystem;

namespace ezio::recorder::service {

struct FlightRecorder::Job {
  Job(uint64_t keep_ns, uint64_t max_bytes) : buffer(keep_ns, max_bytes) {}
  std::string path;  // under the cgroup2 mount, "/" first
  uint64_t cgroup_id = 0;
  uid_t owner = 0;
  Origin origin = Origin::kStart;
  double seconds = 0;
  uint64_t max_bytes = 0;
  unsigned slot = 0;
  uint64_t started_ns = 0;
  size_t present = 0;  // the owner's processes there when its recording began
  FlightBuffer buffer;
  std::unique_ptr<RingReader> reader;
  JobRules rules;
};

namespace {

constexpr long kDrainPeriodNs = 100'000'000;
constexpr unsigned kTicksPerRuleCheck = 10;  // the rules are evaluated every second

// Whether pid runs as uid (real and effective): only the owner's processes join the job.
bool runs_as(pid_t pid, uid_t uid) {
  std::ifstream status(fmt::format("/proc/{}/status", pid));
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Uid:", 0) != 0) continue;
    std::istringstream in(line.substr(4));
    uid_t real = 0, effective = 0;
    in >> real >> effective;
    return in && real == uid && effective == uid;
  }
  return false;
}

// What /proc says of a running process: its name, parent and program, as its fork and exec
// records would have (it began before the job's recording).
KnownProcess running_process(pid_t pid) {
  KnownProcess p;
  p.pid = static_cast<uint32_t>(pid);
  std::ifstream comm(fmt::format("/proc/{}/comm", pid));
  std::getline(comm, p.comm);
  std::ifstream stat(fmt::format("/proc/{}/stat", pid));
  std::string line;
  std::getline(stat, line);
  // "pid (comm) state ppid ...": the name may hold spaces and parentheses, the last ')' ends it.
  if (size_t close = line.rfind(')'); close != std::string::npos) {
    std::istringstream rest(line.substr(close + 1));
    std::string state;
    rest >> state >> p.ppid;
  }
  std::error_code ec;
  p.exe = fs::read_symlink(fmt::format("/proc/{}/exe", pid), ec).string();
  return p;
}

struct CgroupDir {
  fs::path rel;  // under the mount, normalized: "job42/step_0", "" for the root
  fs::path dir;
  struct stat st {};
};

// A path under the mount that names a cgroup v2 (a directory with its cgroup.procs), however it
// is written ("job42", "/job42/", "/a/./b"): one cgroup, one job path. A path leaving the mount
// ("../etc") is refused, not resolved.
CgroupDir find_cgroup(const fs::path& mount, const std::string& cgroup) {
  CgroupDir c;
  c.rel = fs::path(cgroup).lexically_normal().relative_path();
  if (!c.rel.empty() && !c.rel.has_filename()) c.rel = c.rel.parent_path();  // "job42/"
  if (!c.rel.empty() && *c.rel.begin() == "..") {
    fail("{} is not a path under the cgroup v2 mount {}", cgroup, mount.string());
  }
  c.dir = mount / c.rel;
  if (stat(c.dir.c_str(), &c.st) != 0 || !S_ISDIR(c.st.st_mode) ||
      !fs::exists(c.dir / "cgroup.procs")) {
    fail("there is no cgroup {} (no directory {} under the cgroup v2 mount {})", cgroup,
         c.dir.string(), mount.string());
  }
  return c;
}

// A request's positive number field, within [low, high]; `fallback` when absent.
double request_number(const nlohmann::json& request, const char* name, double fallback, double low,
                      double high) {
  auto it = request.find(name);
  if (it == request.end()) return fallback;
  if (!it->is_number()) throw ProtocolError(fmt::format("field \"{}\" is not a number", name));
  double v = it->get<double>();
  if (!(v >= low && v <= high)) fail("{} {} is out of range: {} to {}", name, v, low, high);
  return v;
}

std::string request_string(const nlohmann::json& request, const char* name) {
  auto it = request.find(name);
  if (it == request.end() || !it->is_string() || it->get<std::string>().empty()) {
    throw ProtocolError(fmt::format("field \"{}\" missing or not a non-empty string", name));
  }
  return it->get<std::string>();
}

// The records, then the names of the window's processes (JSON), in a sealed memfd.
UniqueFd records_file(const FlightBuffer::Window& w, const std::string& processes) {
  UniqueFd fd(memfd_create("eziotrace-snapshot", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!fd) fail("memfd_create: {}", errno_text(errno));
  auto put = [&](const char* p, size_t n) {
    while (n > 0) {
      ssize_t k = write(fd.get(), p, n);
      if (k < 0 && errno == EINTR) continue;
      if (k <= 0) fail("cannot write the snapshot: {}", errno_text(errno));
      p += k;
      n -= size_t(k);
    }
  };
  put(w.records.data(), w.records.size());
  put(processes.data(), processes.size());
  // The client reads it as it is: no one may change it after.
  fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
  return fd;
}

}  // namespace

FlightRecorder::FlightRecorder(SessionKernel& kernel, const FlightConfig& config, fs::path mount)
    : kernel_(kernel),
      config_(config),
      mount_(std::move(mount)),
      timer_(timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK)) {
  if (!timer_) fail("timerfd_create: {}", errno_text(errno));
  for (const std::string& cgroup : config_.cgroups) {
    try {
      open_job(spec(cgroup, Origin::kStart));
    } catch (const Error& e) {
      fail("--flight {}: {}", cgroup, e.what());
    }
  }
  start_slurm();
  arm_timer();
}

// The drains run while there is something to drain or Slurm's directory to look for: an idle
// eziotraced (jobs are added later, by request) is not woken ten times a second for nothing.
void FlightRecorder::arm_timer() {
  bool wanted = !jobs_.empty() || slurm_;
  if (wanted == timer_armed_) return;
  itimerspec period{};
  if (wanted) period = {{0, kDrainPeriodNs}, {0, kDrainPeriodNs}};
  if (timerfd_settime(timer_.get(), 0, &period, nullptr) != 0) {
    fail("timerfd_settime: {}", errno_text(errno));
  }
  timer_armed_ = wanted;
}

void FlightRecorder::remove_job(const std::string& path) {
  auto it = std::find_if(jobs_.begin(), jobs_.end(), [&](auto& j) { return j->path == path; });
  if (it == jobs_.end()) return;
  kernel_.close((*it)->slot);
  spdlog::info("flight recorder: job {} ended: its session {} and buffer freed", path, (*it)->slot);
  jobs_.erase(it);
  arm_timer();
}

FlightRecorder::~FlightRecorder() {
  for (auto& job : jobs_) kernel_.close(job->slot);
}

FlightRecorder::JobSpec FlightRecorder::spec(const std::string& cgroup, Origin origin) const {
  return {cgroup, std::nullopt, origin, config_.seconds, config_.max_bytes};
}

FlightRecorder::Job& FlightRecorder::open_job(const JobSpec& spec, std::optional<MadeRing> made) {
  CgroupDir cgroup;
  std::string path;
  try {
    cgroup = find_cgroup(mount_, spec.cgroup);
    path = "/" + cgroup.rel.string();
    for (const auto& other : jobs_) {
      if (other->path == path || other->cgroup_id == cgroup.st.st_ino) {
        fail("cgroup {} is flight-recorded already (job {}, {}'s)", spec.cgroup, other->path,
             user_name(other->owner));
      }
    }
  } catch (const Error&) {
    // Removed on the ring maker's thread, then its slot given back (daemon.cpp).
    if (made) maker_->request({made->slot, 0, /*spare=*/true});
    throw;
  }
  if (!made) made = make_ring();
  auto job = std::make_unique<Job>(uint64_t(spec.seconds * 1e9), spec.max_bytes);
  job->path = path;
  job->cgroup_id = cgroup.st.st_ino;
  job->owner = spec.owner.value_or(cgroup.st.st_uid);
  job->origin = spec.origin;
  job->seconds = spec.seconds;
  job->max_bytes = spec.max_bytes;
  SessionKernel::Opened opened = kernel_.open(made->slot, std::move(made->rings));
  job->slot = opened.slot;
  job->started_ns = monotonic_ns();
  Job& j = *job;
  jobs_.push_back(std::move(job));  // closed with the recorder from now on
  try {
    // Attached before the job's processes are looked for: one starting meanwhile is seen.
    kernel_.attach();
    kernel_.set_layers(j.slot, uint32_t(kAllLayers));
    j.reader =
        std::make_unique<RingReader>(std::move(opened.rings.front()), opened.ring_bytes, j.buffer);
    // The cgroup first, then the processes there already: one forking meanwhile is in either.
    auto level = unsigned(std::distance(cgroup.rel.begin(), cgroup.rel.end()));
    kernel_.record_cgroup(j.slot, j.cgroup_id, level, j.owner);
  } catch (const Error&) {
    remove_job(j.path);  // its session closed: a refused job leaves no slot taken
    throw;
  }
  size_t added = enroll_present(j, cgroup.dir);
  j.present = added;
  spdlog::info(
      "flight recorder: job {} (cgroup {}, {}'s), the last {} s, at most {} MiB; {} "
      "process(es) there already",
      j.path, j.cgroup_id, user_name(j.owner), j.seconds, j.max_bytes >> 20, added);
  arm_timer();
  return j;
}

FlightRecorder::MadeRing FlightRecorder::make_ring() {
  unsigned slot = kernel_.reserve();
  try {
    // One ring: the job's buffer keeps its records in the order they were read.
    return {slot, kernel_.make_rings(slot, config_.ring_bytes, /*per_cpu=*/false)};
  } catch (const Error&) {
    kernel_.unreserve(slot);
    throw;
  }
}

size_t FlightRecorder::enroll_present(Job& job, const fs::path& dir) {
  size_t added = 0;
  auto enroll_in = [&](const fs::path& d) {
    std::ifstream procs(d / "cgroup.procs");
    for (pid_t pid; procs >> pid;) {
      if (!runs_as(pid, job.owner) || !kernel_.enroll(job.slot, pid)) continue;
      job.buffer.name_running(running_process(pid));
      ++added;
    }
  };
  enroll_in(dir);
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    if (it->is_directory(ec)) enroll_in(it->path());
  }
  return added;
}

void FlightRecorder::drain(Job& job) {
  job.reader->drain();
  job.buffer.expire(monotonic_ns());
}

void FlightRecorder::on_timer() {
  uint64_t ticks;
  (void)!read(timer_.get(), &ticks, sizeof(ticks));
  for (auto& job : jobs_) drain(*job);
  if (lookups_) {
    for (const SlurmUserLookups::Answer& a : lookups_->expire(monotonic_ns())) on_user(a);
  }
  bool second = ++ticks_ % kTicksPerRuleCheck == 0;
  if (slurm_ && maker_ && second) slurm_->poll();
  const RulesConfig& rc = config_.rules;
  if (rc.rules.empty() || !rc.figures || !second) return;
  for (auto& job : jobs_) {
    job->rules.reap();
    uint64_t now = monotonic_ns();
    if (const FlightRule* r = job->rules.evaluate(rc, rc.figures(job->cgroup_id), now))
      job->rules.fire(rc, *r, job->path, job->owner, now);
  }
}

FlightRecorder::Job* FlightRecorder::find(const std::string& id) {
  for (auto& job : jobs_) {
    auto slurm = metrics::slurm_job_id(job->path);
    if (id == job->path || "/" + id == job->path || id == std::to_string(job->cgroup_id) ||
        (slurm && id == *slurm)) {
      return job.get();
    }
  }
  return nullptr;
}

std::pair<nlohmann::json, UniqueFd> FlightRecorder::snapshot(const Peer& peer,
                                                             const nlohmann::json& request) {
  if (!request.contains("job") || !request["job"].is_string()) {
    throw ProtocolError("SNAPSHOT without a job");
  }
  std::string id = request["job"].get<std::string>();
  Job* job = find(id);
  if (!job) fail("eziotraced flight-records no job {} (eziotrace service status lists yours)", id);
  double seconds = job->seconds;
  if (request.contains("seconds")) {
    if (!request["seconds"].is_number() || request["seconds"].get<double>() <= 0) {
      throw ProtocolError("SNAPSHOT's seconds is not a positive number");
    }
    seconds = std::min(seconds, request["seconds"].get<double>());
  }
  if (peer.uid != 0 && peer.uid != job->owner) {
    fail("job {} is {}'s: only its owner and root may take its snapshot", id,
         user_name(job->owner));
  }
  drain(*job);
  uint64_t now = monotonic_ns();
  uint64_t span = uint64_t(seconds * 1e9);
  uint64_t asked = std::max(now > span ? now - span : 0, job->started_ns);
  FlightBuffer::Window w = job->buffer.window(asked, now);
  nlohmann::json processes = nlohmann::json::array();
  for (const KnownProcess& p : w.processes) {
    processes.push_back({{"pid", p.pid}, {"ppid", p.ppid}, {"comm", p.comm}, {"exe", p.exe}});
  }
  nlohmann::json body = nlohmann::json::parse(kernel_.facts());
  body.update({{"job", job->path},
               {"cgroup_id", job->cgroup_id},
               {"owner", user_name(job->owner)},
               {"asked_start_ns", asked},
               {"window_start_ns", w.start_ns},
               {"window_end_ns", w.end_ns},
               {"events", w.events},
               {"dropped", job->buffer.dropped()},
               {"lost", kernel_.lost(job->slot)},
               {"records_bytes", w.records.size()}});
  // The snapshot a rule fired: its client is the process fire() started, no one else.
  if (const std::string* rule = job->rules.rule_of(peer.pid)) body["rule"] = *rule;
  spdlog::info("flight recorder: snapshot of job {} for {} (pid {}): {} events, {:.3f} s",
               job->path, user_name(peer.uid), peer.pid, w.events, (w.end_ns - w.start_ns) / 1e9);
  return {std::move(body), records_file(w, processes.dump())};
}

nlohmann::json FlightRecorder::status(uid_t uid) const {
  nlohmann::json jobs = nlohmann::json::array();
  for (const auto& job : jobs_) {
    if (uid != 0 && uid != job->owner) continue;
    jobs.push_back({{"job", job->path},
                    {"cgroup_id", job->cgroup_id},
                    {"owner", user_name(job->owner)},
                    {"seconds", job->seconds},
                    {"added", job->origin == Origin::kRequest},
                    {"events", job->buffer.events()},
                    {"bytes", job->buffer.bytes()},
                    {"dropped", job->buffer.dropped()}});
    if (!config_.rules.rules.empty()) jobs.back()["rules"] = job->rules.status();
  }
  return jobs;
}

nlohmann::json FlightRecorder::add(const nlohmann::json& request) {
  JobSpec s = spec(request_string(request, "cgroup"), Origin::kRequest);
  // The ranges eziotraced's --flight-seconds and --flight-mib take.
  s.seconds = request_number(request, "seconds", config_.seconds, 0.1, 86400);
  s.max_bytes =
      uint64_t(request_number(request, "mib", double(config_.max_bytes >> 20), 1, double(1 << 20)))
      << 20;
  Job& j = open_job(s);
  return {{"job", j.path},        {"cgroup_id", j.cgroup_id}, {"owner", user_name(j.owner)},
          {"seconds", j.seconds}, {"mib", j.max_bytes >> 20}, {"processes", j.present}};
}

nlohmann::json FlightRecorder::remove(const nlohmann::json& request) {
  std::string id = request_string(request, "cgroup");
  Job* job = find(id);
  if (!job) fail("eziotraced flight-records no job {} (eziotrace service status lists them)", id);
  if (job->origin == Origin::kSlurm) {
    fail("job {} is a Slurm job that --flight-slurm follows: its recording ends with the job",
         job->path);
  }
  std::string path = job->path;
  remove_job(path);
  return {{"job", path}};
}

}  // namespace ezio::recorder::service
