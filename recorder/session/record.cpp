// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/session/record.h"

#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <future>
#include <memory>
#include <optional>
#include <thread>

#include "common/command.h"
#include "common/error.h"
#include "common/log.h"
#include "common/schema/files.h"
#include "recorder/archive/archive_pipeline.h"
#include "recorder/archive/kernel_archive.h"
#include "recorder/decode/record_store.h"
#include "recorder/load/in_process_source.h"
#include "recorder/probe/kernel_cache.h"
#include "recorder/probe/probe.h"
#include "recorder/session/archive_output.h"
#include "recorder/session/kernel_path.h"
#include "recorder/session/launcher.h"
#include "recorder/session/privileges.h"
#include "recorder/session/signals.h"
#include "recorder/session/start_gate.h"

namespace fs = std::filesystem;

namespace ezio::recorder {
namespace {

std::string readlink_or_empty(const std::string& path) {
  std::array<char, 4096> buf{};
  ssize_t n = readlink(path.c_str(), buf.data(), buf.size() - 1);
  return n > 0 ? std::string(buf.data(), n) : std::string();
}

// The archive is written while the application runs, in batches: often enough that little is left
// to write when the application ends (that part adds to the wall time of the recording), seldom
// enough that a batch's fixed costs (sorting, the block layer's pass) stay small per record.
constexpr uint64_t kWriteIntervalNs = 25'000'000;
// The longest wait for records when the ring buffer does not wake the recorder (it does at an
// eighth full, and when the application ends).
constexpr int kPollMs = 25;
// Calls that ended this long before a poll began are complete in the records received. A record is
// committed by the program that stamps its end, normally microseconds later; the margin covers a
// thread preempted in between on a busy machine.
constexpr uint64_t kSettleMarginNs = 20'000'000;
// Records held in memory, waiting to be written, past which the ring buffer is no longer drained
// (about 12 MB, and as much again in the batch being written): a recorder that cannot keep up
// then loses events, counted in the kernel, instead of memory without bound; the kernel's ring
// buffer is the reserve for bursts. More than a settle margin's records at ~3 M calls/s.
constexpr size_t kMaxHeldRecords = 131'072;
// Records taken from the store and queued for the archive's writer thread (ArchivePipeline) past
// which no more are taken: the writer may fall as far behind as the store holds, then the store
// fills and the drain stops as above. Memory: the store, the queue and the batch being written.
constexpr size_t kMaxQueuedRecords = kMaxHeldRecords;

std::string host_name() {
  std::array<char, 256> buf{};
  return gethostname(buf.data(), buf.size() - 1) == 0 ? std::string(buf.data()) : "localhost";
}

std::string kernel_release() {
  utsname u{};
  return uname(&u) == 0 ? std::string(u.release) : std::string();
}

std::string human_bytes(uint64_t b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(b);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  return u == 0 ? fmt::format("{} B", b) : fmt::format("{:.1f} {}", v, units[u]);
}

[[noreturn]] void no_archive(const Error& why, const std::string& application_end) {
  fail("no archive: it could not be written ({}); the application ended: {}", why.what(),
       application_end);
}

// The time before which every call's records have arrived: all that were committed when the
// ring buffer was emptied (`polled`), else (the drain stopped, the store full) those that ended a
// settle margin before the latest record received.
uint64_t settled_before(const RecordStore& store, uint64_t polled, bool emptied) {
  uint64_t t = emptied ? polled : store.newest();
  t = t > kSettleMarginNs ? t - kSettleMarginNs : 0;
  // A store full of calls younger than that (a rate above kMaxHeldRecords per margin) would stop
  // the drain for good: what it holds is written anyway.
  if (!emptied && !store.holds_settled(t)) return UINT64_MAX;
  return t;
}

// Drains the ring buffer to its end, writing what the store holds whenever it is full.
// Why the recording is interrupted ("" when it is not): the service gone first, since after it
// nothing was recorded and the losses are unknown, then the signal the recorder received.
std::string interruption(const SignalForwarding& signals, const KernelSource& bpf) {
  std::string why;
  if (!bpf.interrupted().empty()) {
    why = bpf.interrupted() + ": nothing recorded after that, loss counters unknown";
  }
  if (int sig = signals.first()) {
    why += fmt::format("{}SIG{} received", why.empty() ? "" : "; ", sigabbrev_np(sig));
  } else if (signals.received_any() && why.empty()) {
    why = "a signal received";
  }
  return why;
}

void drain_all(KernelSource& bpf, RecordStore& store, ArchivePipeline& pipeline) {
  while (!bpf.drain()) pipeline.push(store, settled_before(store, 0, false));
}

// Runs the application to its end while its records are written into the archive; returns its
// exit status. Then, while descendants that outlived it still run, goes on recording them for up
// to wait_children_s seconds (still_running: those found at the last look). When the archive
// cannot be written (a full disk), the recording stops but the application goes on; the error is
// raised once it has ended.
int record_until_exit(Launcher& app, KernelSource& bpf, RecordStore& store,
                      ArchivePipeline& pipeline, SignalForwarding& signals, double wait_children_s,
                      size_t& still_running) {
  std::optional<Error> failure;
  std::optional<int> status;
  uint64_t next_write = 0;
  bool emptied = true;
  auto record_a_while = [&] {
    uint64_t polled = monotonic_ns();
    emptied = bpf.poll(emptied ? kPollMs : 0);
    if (emptied && polled < next_write) return;
    if ((failure = pipeline.failure())) {
      spdlog::error("{}; recording stops, the application goes on", failure->what());
      bpf.stop();
      return;
    }
    // A call that ended well before `before` has all its records here (its file record
    // follows it in the ring buffer). The batch is written on the pipeline's thread while this
    // one goes on draining.
    if (pipeline.offer(store, settled_before(store, polled, emptied))) {
      next_write = monotonic_ns() + kWriteIntervalNs;
    } else if (!emptied) {
      // The writer is a queue behind and the store is full: the rings fill meanwhile, and what
      // they cannot take is lost, counted in the kernel.
      pipeline.wait_for_room(std::chrono::milliseconds(kPollMs));
    }
  };
  while (!(status = app.poll_exit())) {
    if (int sig = signals.take()) app.signal(sig);
    if (failure) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      continue;
    }
    record_a_while();
  }
  if (app.exit_fd() >= 0) bpf.unwatch(app.exit_fd());  // readable from now on
  uint64_t deadline = monotonic_ns() + static_cast<uint64_t>(wait_children_s * 1e9);
  // Through the service each count is a request: the last one is kept (a tree found empty stays
  // empty, nothing traced is left to fork).
  while (!failure && (still_running = bpf.traced_processes()) > 0 && monotonic_ns() < deadline &&
         !signals.take()) {
    record_a_while();
  }
  if (failure) no_archive(*failure, app.how_it_ended());
  return *status;
}

// Writes the rest of the archive after the application ended, then reads it back (unless it is
// only a merge's input: RecordOptions::read_back) and moves it into place (archive_output.h).
ArchiveSummary finish_archive(ArchivePipeline& pipeline, KernelArchive& archive, RecordStore& store,
                              const RecordExtras& extras, ArchiveOutput& output,
                              const TargetUser& user, bool read_back) {
  uint64_t t_write = monotonic_ns();
  pipeline.flush();
  spdlog::debug("the archive's writer thread: {:.6f} s of CPU, a queue behind the drain {} times",
                pipeline.writer_cpu_ns() / 1e9, pipeline.times_full());
  ArchiveSummary summary = archive.finish(store);
  spdlog::debug("archive finished in {:.3f} s after the application",
                (monotonic_ns() - t_write) / 1e9);
  if (extras.finish) extras.finish(output.staged());
  output.publish(user, read_back);
  return summary;
}

// Whether the application starts at once, held at the preload helper's gate while the programs
// load (start_gate.h): only the programs loaded here can take a process past its exec.
bool use_start_gate(const RecordOptions& o, const std::vector<std::string>& env) {
  if (o.gate_helper.empty() || !service::goes_in_process(o)) return false;
  std::string why = why_helper_not_loaded(env, o.gate_helper);
  if (why.empty()) why = why_not_gated(o.command.front());
  if (!why.empty()) {
    spdlog::debug("the application starts once the kernel side is loaded: {}", why);
    return false;
  }
  spdlog::debug(
      "the application starts at once, held at the start gate until the kernel side "
      "filters on it");
  return true;
}

// The exec record the kernel could not write: the program exec'd before the programs filtered on
// it. Its name as the kernel gives it: the exec'd file's (a script's, not its interpreter's).
void note_exec(RecordStore& store, pid_t pid, const std::string& command, uint64_t ts) {
  ezio_proc_rec r{};
  r.h = {EZIO_RECORD_VERSION,        EZIO_REC_EXEC,
         EZIO_LAYER_PROCESS,         sizeof(r),
         static_cast<uint32_t>(pid), static_cast<uint32_t>(pid)};
  r.ts = ts;
  std::string path = resolve_command(command).value_or(command);
  std::string comm = fs::path(path).filename().string().substr(0, sizeof(r.comm) - 1);
  path.resize(std::min(path.size(), sizeof(r.filename) - 1));
  std::memcpy(r.comm, comm.data(), comm.size());
  std::memcpy(r.filename, path.data(), path.size());
  store.add(&r, sizeof(r));
}

// The application, started, and the kernel side filtering on it; its own code not yet running.
struct Started {
  std::unique_ptr<KernelSource> source;
  std::unique_ptr<Launcher> app;
  bool gated = false;
  uint64_t exec_ns = 0;  // gated: its exec was seen done
  uint64_t open_ns = 0;  // gated: the kernel side filtered on it, the gate opened
};

// Which side of the start gate waited for the other, for -v.
void log_gate(Started& s) {
  auto ms = [&](uint64_t t) { return (static_cast<double>(t) - s.exec_ns) / 1e6; };
  if (!s.gated || !s.app->gate_reached()) return;
  spdlog::debug(
      "start gate: the application reached it {:.1f} ms after its exec, the kernel side filtered "
      "on it after {:.1f} ms",
      ms(s.app->gate_reached_ns()), ms(s.open_ns));
}

// Gated: the application execs first and its start-up (the loader, EZTrace's) runs while the
// programs load; otherwise it waits before its exec until they filter on its pid.
Started start_application(const RecordOptions& o, const std::vector<std::string>& env,
                          const TargetUser& user, RecordStore& store, RecordingInfo& info) {
  LayerSet layers = parse_layers(o.layers);
  uint64_t ring_buffer_bytes = o.ring_buffer_mib * 1024 * 1024;
  check_ring_buffer_size(ring_buffer_bytes);
  Started s;
  s.gated = use_start_gate(o, env);
  FirstProcess first;
  if (s.gated) {
    info.start_monotonic_ns = monotonic_ns();
    info.start_realtime_ns = realtime_ns();
    s.app = std::make_unique<Launcher>(o.command, env, user, Launcher::Start::kGated);
    s.app->confirm_exec();
    s.exec_ns = monotonic_ns();
  } else {
    // Held before its exec, it is started first: eziotraced is asked to trace it in the
    // exchange that opens the session.
    s.app = std::make_unique<Launcher>(o.command, env, user);
    first = {s.app->pid(), s.app->exit_fd()};
  }
  s.source = open_kernel_source(layers, ring_buffer_bytes, o, store, first);
  if (!s.gated) {
    s.source->trace_process(s.app->pid(), s.app->exit_fd());
    info.start_monotonic_ns = monotonic_ns();
    info.start_realtime_ns = realtime_ns();
  } else if (s.source->traces_running_processes()) {
    s.source->trace_running_process(s.app->pid(), s.app->exit_fd());
    note_exec(store, s.app->pid(), o.command.front(), s.exec_ns);
  } else {
    fail("the recording service started while the application did: record again");
  }
  info.root_pid = s.app->pid();
  return s;
}

// Destroys the kernel side on a thread of its own. A slow teardown (the programs unhooked: mostly
// waits for the kernel; the threads it starts inherit the priority) runs at the lowest priority,
// so as not to take the CPU from the archive's finish on a busy machine. A quick one (a service
// session's ring unmapped) does not: at nice 19 it waited for a CPU after the archive was
// published (docs/costs.md), and the process's exit waits for it.
std::jthread tear_down_in_background(std::unique_ptr<KernelSource> source) {
  bool slow = source->slow_teardown();
  return std::jthread([source = std::move(source), slow]() mutable {
    if (slow) (void)setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), 19);
    source.reset();
  });
}

}  // namespace

std::unique_ptr<KernelSource> open_kernel_source(const LayerSet& layers, uint64_t ring_buffer_bytes,
                                                 const RecordOptions& o, RecordStore& store,
                                                 FirstProcess first) {
  // eziotraced's session when there is a service (docs/service.md), else the programs loaded here.
  return service::open_service_or(
      o, ring_buffer_bytes, store, first, [&]() -> std::unique_ptr<KernelSource> {
        check_recording_privileges();
        // The ring buffers are made and installed while the programs load: they are on the
        // start's critical path (KernelPrograms).
        auto ring = std::async(std::launch::async,
                               [ring_buffer_bytes] { return make_ring_set(ring_buffer_bytes); });
        auto programs = load_kernel_programs(layers, o.probe_cache, std::move(ring));
        return std::make_unique<InProcessSource>(std::move(programs), ring_buffer_bytes, store);
      });
}

RecordResult record(const RecordOptions& o, const RecordExtras& extras) {
  if (o.command.empty()) fail("no command to record");
  TargetUser user = target_user();
  RecordResult result;
  ArchiveOutput output(o.output, o.command.front(), o.force);
  result.archive = output.path();

  RecordingInfo& info = result.info;
  info.command = o.command;
  if (o.user_command != o.command) info.user_command = o.user_command;
  info.cwd = fs::current_path().string();
  info.hostname = host_name();
  info.kernel_release = kernel_release();
  for (int fd = 0; fd < 3; ++fd)
    info.stdio_paths[fd] = readlink_or_empty(fmt::format("/proc/self/fd/{}", fd));
  info.probes[EZIO_LAYER_SYSCALL] = "tp_btf/sys_enter+sys_exit";
  info.probes[EZIO_LAYER_PROCESS] = "tp_btf/sched_process_fork+exec+exit";

  std::vector<std::string> env = o.environment.empty() ? current_environment() : o.environment;
  if (extras.prepare) extras.prepare(result.archive, env);

  RecordStore store;
  store.limit(kMaxHeldRecords);
  Started started = start_application(o, env, user, store, info);
  KernelSource& bpf = *started.source;
  Launcher& app = *started.app;
  info.recording_path = bpf.path_name();
  for (unsigned l = 0; l < EZIO_LAYER_COUNT; ++l) {
    if (l != EZIO_LAYER_PROCESS) info.probes[l] = probe_property(bpf.plan().layers[l]);
  }
  SignalForwarding signals;
  started.open_ns = monotonic_ns();
  started.gated ? app.open_gate() : app.release();
  if (app.exit_fd() >= 0) bpf.wake_on(app.exit_fd());
  // Made while the application runs (OTF2's archive and its buffers: milliseconds); its records
  // wait in the ring buffer meanwhile.
  KernelArchive archive(output.staged(), info);
  archive.tap(extras.tap, !extras.tap_only);
  ArchivePipeline pipeline(
      [&archive](ArchiveBatch&& batch) { archive.write_batch(std::move(batch)); },
      kMaxQueuedRecords, [&archive](ArchiveBatch& batch) { archive.index(batch); });

  size_t still_running = 0;
  int status =
      record_until_exit(app, bpf, store, pipeline, signals, o.wait_children_s, still_running);
  // What follows is the time after the application (bench/merge/run.sh stamps this line).
  spdlog::debug("the application ended");
  drain_all(bpf, store, pipeline);
  info.end_monotonic_ns = monotonic_ns();
  info.still_running = still_running > 0 ? bpf.traced_processes() : 0;
  SessionTotals totals = bpf.stop();
  drain_all(bpf, store, pipeline);  // what was in flight while the programs were unhooked
  result.exit_status = status;
  info.application_end = app.how_it_ended();
  info.application_cpu_ns = app.cpu_ns();
  // The recording's own end first: an interrupted recording may lack what a crash would explain.
  if (app.crashed()) info.status = "application-crashed";
  log_gate(started);
  if (started.gated && !app.gate_reached() && info.status == "complete") {
    // The helper never said so: the program may have run before the kernel side filtered on it.
    spdlog::warn(
        "the application did not reach eziotrace's start gate: its start (before the kernel "
        "side filtered on it) may be missing from the archive");
    info.status = "start-missing";
  }
  info.status_reason = interruption(signals, bpf);
  if (!info.status_reason.empty()) info.status = "interrupted";
  info.lost = totals.lost;
  info.lost_per_cpu = totals.lost_per_cpu;
  info.rings = totals.rings;
  info.ring_bytes = totals.ring_bytes;
  info.lost[EZIO_LAYER_SYSCALL] += store.malformed();
  store.devices() = std::move(totals.devices);
  store.reclaimed() = std::move(totals.reclaimed);
  // Nothing more comes from the kernel side: it is torn down while the archive is finished.
  result.teardown = tear_down_in_background(std::move(started.source));

  try {
    result.summary = finish_archive(pipeline, archive, store, extras, output, user, o.read_back);
  } catch (const Error& e) {
    no_archive(e, info.application_end);
  }
  return result;
}

void print_summary(const RecordResult& r) {
  const auto& info = r.info;
  double seconds = (info.end_monotonic_ns - info.start_monotonic_ns) / 1e9;
  std::string out =
      fmt::format("recorded {} for {:.3f} s ({}, {:.3f} s of CPU), {} processes, {} threads\n",
                  fmt::join(info.command, " "), seconds, info.application_end,
                  info.application_cpu_ns / 1e9, r.summary.processes, r.summary.threads);
  out += fmt::format("  {:<10} {:>10} {:>10} {:>10} {:>10} {:>12} {:>12} {:>10}\n", "layer",
                     "events", "reads", "writes", "other", "bytes read", "bytes written", "lost");
  uint64_t total_lost = 0;
  for (unsigned l = 0; l < EZIO_LAYER_COUNT; ++l) {
    const auto& t = r.summary.layers[l];
    total_lost += info.lost[l];
    if (info.probes[l].empty() && t.events == 0 && info.lost[l] == 0) continue;
    out += fmt::format("  {:<10} {:>10} {:>10} {:>10} {:>10} {:>12} {:>12} {:>10}\n", layer_name(l),
                       t.events, t.reads, t.writes, t.other, human_bytes(t.bytes_read),
                       human_bytes(t.bytes_written), info.lost[l]);
  }
  std::string per_cpu;
  for (size_t cpu = 0; cpu < info.lost_per_cpu.size(); ++cpu) {
    if (info.lost_per_cpu[cpu]) per_cpu += fmt::format(" cpu{} {}", cpu, info.lost_per_cpu[cpu]);
  }
  if (!per_cpu.empty()) {
    out += fmt::format("  lost per CPU ({} ring buffers):{}\n", info.rings, per_cpu);
  }
  const PageCacheTotals& pc = r.summary.pagecache;
  if (!info.probes[EZIO_LAYER_PAGECACHE].empty()) {
    out += fmt::format(
        "  page cache (pages): {} hits, {} misses, {} readahead, {} dirtied, {} faults, "
        "{} evicted, {} reclaimed by others\n",
        pc.hits, pc.misses, pc.readahead, pc.dirtied, pc.faults, pc.evicted, pc.reclaimed);
  }
  for (const auto& [dev, un] : r.summary.unattributed) {
    // The bytes include other processes' part of requests shared with the target.
    out += fmt::format("  block {}: {} not attributed to the target ({} requests whole)\n", dev,
                       human_bytes(un.bytes), un.requests);
  }
  for (const auto& program : r.summary.left_at_privileged_exec) {
    out += fmt::format(
        "  a process left the recording at the exec of a privileged program: {}; nothing of it "
        "after the exec is recorded (setuid, setgid or file capabilities)\n",
        program);
  }
  if (info.still_running > 0) {
    out += fmt::format(
        "  {} traced process(es) still running when recording stopped: their later I/O is not in "
        "the archive (--wait-children=SECONDS waits longer)\n",
        info.still_running);
  }
  out += fmt::format("archive: {}{}", (r.archive / schema::kAnchorFile).string(),
                     info.status == "interrupted"           ? " (recording interrupted)"
                     : info.status == "application-crashed" ? " (the application crashed)"
                     : info.status == "start-missing"       ? " (its start may be missing)"
                                                            : "");
  spdlog::info("{}", out);
  if (total_lost > 0) {
    spdlog::warn(
        "{} events were lost in the kernel (lost column): ring buffer full (a larger "
        "--ring-buffer helps), a tracking table full, or returns missed by kretprobes",
        total_lost);
  }
}

}  // namespace ezio::recorder
