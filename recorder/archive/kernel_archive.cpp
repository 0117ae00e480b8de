// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/archive/kernel_archive.h"

#include <fcntl.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <unordered_map>
#include <vector>

#include "common/otf2/check.h"
#include "common/otf2/writer.h"
#include "common/schema/properties.h"
#include "common/schema/regions.h"
#include "common/schema/snapshot.h"
#include "common/version.h"
#include "recorder/archive/block_archive.h"
#include "recorder/archive/fd_table.h"
#include "recorder/archive/io_flags.h"
#include "recorder/archive/process_table.h"
#include "recorder/archive/span_nesting.h"
#include "recorder/core/syscall_table.h"

namespace ezio::recorder {
namespace {

struct Attributes {
  otf2::TypedAttribute fd, bytes, offset, result, call_id;
};

bool is_file_io(IoKind k) { return k != IoKind::None && k != IoKind::Dup; }

}  // namespace

class KernelArchive::Builder {
 public:
  // The merged mode's merge copies the tapped events as they are, of the archive's model.
  void tap(otf2::EventTap* tap, bool write_events) { w_.tap(tap, write_events); }
  void model1() {
    full_ = true;
    nested_->full_attributes(full_);
  }
  Builder(const std::filesystem::path& dir, const RecordingInfo& info)
      : info_(info), procs_(info), w_(dir) {
    machine_ = w_.system_tree_node(info.hostname.empty() ? "localhost" : info.hostname, "machine");
    fds_.emplace(w_, machine_, info);
    attrs_ = {w_.attribute(schema::syscall::kFd), w_.attribute(schema::syscall::kBytes),
              w_.attribute(schema::syscall::kOffset), w_.attribute(schema::syscall::kResult),
              w_.attribute(schema::kCallId)};
    for (const auto& sc : syscall_table()) {
      regions_[sc.nr] =
          w_.region(sc.name, schema::region_canonical_name("syscall", sc.name),
                    schema::region_description("syscall"),
                    is_file_io(sc.kind) ? OTF2_REGION_ROLE_FILE_IO : OTF2_REGION_ROLE_FUNCTION);
    }
    nested_.emplace(w_, summary_, machine_);
    block_.emplace(w_, machine_, summary_);
    pagecache_.emplace(w_);
  }

  // Block events are written this long after the calls: a request that took longer arrives
  // (complete) after later ones were written, and its first events move to their time.
  static constexpr uint64_t kBlockHorizonNs = 5'000'000'000;

  // Calls and forks in time order (the batch's index), so that every fd table is in the state
  // the call saw.
  void write(ArchiveBatch& batch, bool last, const std::function<void()>& meanwhile = nullptr) {
    CallRecords& calls = batch.records;
    const uint64_t before = batch.before;
    block_->add(std::move(calls.block));
    block_->write_before(last ? before : before > kBlockHorizonNs ? before - kBlockHorizonNs : 0);
    for (const auto& p : calls.procs) procs_.see(p);
    // A sampled thread gets a location of its own even without calls: the page-cache samples
    // name it by its TID (docs/trace-model.md).
    pagecache_->add(std::move(calls.pagecache), [this](uint32_t pid, uint32_t tid) {
      if (!procs_.has_process(pid)) return false;
      procs_.location(pid, tid);
      return true;
    });
    nested_->add_files(calls.files);
    const CallIndex& index = *batch.index;
    nested_->use(&index);
    walk_timeline(index, meanwhile);
    nested_->use(nullptr);  // the batch's records go with it
  }

  ArchiveSummary finish(const RecordStore& store) {
    last_time_ = std::max(last_time_, block_->finish(store.devices()));
    procs_.name_the_unnamed();
    define_locations();
    last_time_ = std::max(
        last_time_,
        pagecache_->finish(
            store.reclaimed(),
            [this](uint32_t pid) {
              auto it = groups_.find(pid);
              return it == groups_.end() ? otf2::Ref(OTF2_UNDEFINED_LOCATION_GROUP) : it->second;
            },
            [this](uint32_t pid) {
              auto it = procs_.processes().find(pid);
              return fmt::format("{} [{}]", it == procs_.processes().end() ? "?" : it->second.comm,
                                 pid);
            },
            summary_.pagecache));
    {  // the page-cache row of the layer table, in pages and bytes of 4 KiB pages
      const PageCacheTotals& pc = summary_.pagecache;
      auto& t = summary_.layers[EZIO_LAYER_PAGECACHE];
      t.events = pagecache_->received();
      t.reads = pc.accessed;
      t.writes = pc.dirtied;
      t.other = pc.faults;
      t.bytes_read = (pc.misses + pc.readahead) * 4096;
      t.bytes_written = pc.dirtied * 4096;
    }
    write_properties();
    w_.clock({1'000'000'000, info_.start_monotonic_ns,
              std::max(last_time_, info_.end_monotonic_ns) - info_.start_monotonic_ns,
              info_.start_realtime_ns});
    w_.close();
    return summary_;
  }

 private:
  void define_locations() {
    for (const auto& [pid, proc] : procs_.processes()) {
      otf2::Ref group = w_.location_group(fmt::format("{} [{}]", proc.comm, pid),
                                          OTF2_LOCATION_GROUP_TYPE_PROCESS, machine_);
      w_.location_group_property(group, schema::kPid, pid);
      groups_[pid] = group;
      w_.location_group_property(group, schema::kPpid, proc.ppid);
      if (!proc.left_at.empty()) {
        w_.location_group_property(group, schema::kLeftAtPrivilegedExec, proc.left_at);
        summary_.left_at_privileged_exec.push_back(fmt::format("{} [{}]", proc.left_at, pid));
      }
      for (const auto& [tid, loc] : proc.threads) {
        w_.location(loc, fmt::format("{} [{}]", proc.comm, tid), OTF2_LOCATION_TYPE_CPU_THREAD,
                    group);
        w_.location_property(loc, schema::kTid, tid);
        ++summary_.threads;
      }
      ++summary_.processes;
    }
  }

  void walk_timeline(const CallIndex& index, const std::function<void()>& meanwhile) {
    constexpr size_t kItemsBetweenCalls = 4096;
    size_t n = 0;
    for (const auto& it : index.timeline) {
      if (meanwhile && n++ % kItemsBetweenCalls == 0) meanwhile();
      if (it.proc) {
        fds_->fork(it.proc->ppid, it.proc->pid);
      } else if (it.orphan) {
        emit_orphan(*it.orphan);
      } else {
        emit_call(*it.sc, it.open);
      }
    }
  }

  void emit_orphan(const NestedLayers::Orphan& o) {
    // Only the traced processes have locations (a fork or exec record made them known).
    if (!procs_.has_process(o.pid)) return;
    uint64_t loc = procs_.location(o.pid, o.tid);
    uint64_t& last = last_per_location_[loc];
    nested_->emit_orphan(w_.event_writer(loc), o, last);
    last_time_ = std::max(last_time_, last);
  }

  // A relative path is resolved where the kernel resolved it: the opened file's own dentry and
  // mount, walked by the VFS layer. The process may have changed its working directory since it
  // started (chdir is not traced); joining with the directory it started in is the fallback when
  // the VFS layer is off or the walk was truncated.
  std::string absolute_path(const OpenCall& o) {
    if (!o.path.empty() && o.path.front() == '/') return o.path;
    if (const std::string* walked = nested_->opened_path(o.sc.h.pid, o.sc.call_id)) return *walked;
    int32_t dirfd = static_cast<int32_t>(o.sc.fd);
    std::string base = info_.cwd;
    if (dirfd >= 0) {
      base = fds_->path(o.sc.h.pid, dirfd).value_or(fmt::format("<fd {}>", dirfd));
    }
    return (std::filesystem::path(base) / o.path).lexically_normal().string();
  }

  // Where a syscall goes: its location's events, its time span moved past the location's last
  // event (OTF2 refuses a timestamp lower than the previous one on a location).
  struct Placed {
    otf2::EventWriter evt;
    uint64_t t0, t1;
  };

  // The thread of the previous call: most calls follow one of the same thread, which then takes
  // none of the lookups (process, thread, location, event writer) a call would otherwise take.
  struct Thread {
    uint32_t pid = 0, tid = 0;
    uint64_t* last = nullptr;  // in last_per_location_, whose values stay where they are
    otf2::EventWriter evt;
  };

  Placed place(const ezio_syscall_rec& sc) {
    if (!thread_.last || thread_.pid != sc.h.pid || thread_.tid != sc.h.tid) {
      uint64_t loc = procs_.location(sc.h.pid, sc.h.tid);
      thread_ = {sc.h.pid, sc.h.tid, &last_per_location_[loc], w_.event_writer(loc)};
    }
    uint64_t& last = *thread_.last;
    uint64_t t0 = std::max<uint64_t>(sc.t_enter, last);
    uint64_t t1 = std::max<uint64_t>(sc.t_exit, t0);
    last = t1;
    last_time_ = std::max(last_time_, t1);
    return {thread_.evt, t0, t1};
  }

  void emit_call(const ezio_syscall_rec& sc, const OpenCall* open) {
    const SyscallInfo* info = find_syscall(sc.nr);
    if (!info) return;  // the BPF side only sends syscalls of the table
    Placed at = place(sc);
    otf2::Ref region = regions_.at(sc.nr);
    emit_enter(*info, sc, at);

    // The call's VFS and FS events go between the events at t0 and those at t1 (OTF2 refuses a
    // timestamp lower than the previous one on a location).
    bool nested_done = false;
    auto nest = [&] {
      if (!nested_done) nested_->emit_inside(at.evt, sc.h.pid, sc.call_id, at.t0, at.t1, sc.ret);
      nested_done = true;
    };
    bool io_operation =
        info->kind == IoKind::Read || info->kind == IoKind::Write || info->kind == IoKind::Flush;
    if (!io_operation) nest();
    count_call(*info, sc, at);
    emit_io_events(*info, sc, open, at, nest);
    nest();
    at.evt.leave(at.t1, region);
  }

  void emit_enter(const SyscallInfo& info, const ezio_syscall_rec& sc, const Placed& at) {
    bool io_operation =
        info.kind == IoKind::Read || info.kind == IoKind::Write || info.kind == IoKind::Flush;
    if (!full_ && io_operation && static_cast<int32_t>(sc.fd) >= 0 &&
        info.desc.fd_arg != EZIO_NO_ARG) {
      return emit_compact_enter(info, sc, at);
    }
    otf2::EventAttributes a = at.evt.attributes();
    if (info.desc.fd_arg != EZIO_NO_ARG) a.add(attrs_.fd, static_cast<int32_t>(sc.fd));
    if (info.desc.count_arg != EZIO_NO_ARG) a.add(attrs_.bytes, sc.count);
    if (info.desc.offset_arg != EZIO_NO_ARG) a.add(attrs_.offset, sc.offset);
    a.add(attrs_.result, sc.ret).add(attrs_.call_id, sc.call_id);
    at.evt.enter(at.t0, regions_.at(sc.nr), a);
  }

  // Trace model 2: a read or write's bytes asked, result and call id are its I/O operation's
  // (request, bytes done, matching id); a flush's result and call id too. Only an error's
  // result, which IoOperationCancelled cannot hold, stays on the ENTER.
  void emit_compact_enter(const SyscallInfo& info, const ezio_syscall_rec& sc, const Placed& at) {
    otf2::EventAttributes a = at.evt.attributes();
    a.add(attrs_.fd, static_cast<int32_t>(sc.fd));
    if (info.kind == IoKind::Flush && info.desc.count_arg != EZIO_NO_ARG)
      a.add(attrs_.bytes, sc.count);
    if (info.desc.offset_arg != EZIO_NO_ARG) a.add(attrs_.offset, sc.offset);
    if (sc.ret < 0) a.add(attrs_.result, sc.ret);
    at.evt.enter(at.t0, regions_.at(sc.nr), a);
  }

  // The syscall layer's row of the summary.
  void count_call(const SyscallInfo& info, const ezio_syscall_rec& sc, const Placed& at) {
    auto& totals = summary_.layers[EZIO_LAYER_SYSCALL];
    ++totals.events;
    totals.time_ns += at.t1 - at.t0;
    bool ok = sc.ret >= 0;
    if (ok && info.kind == IoKind::Read) {
      ++totals.reads;
      totals.bytes_read += sc.ret;
    } else if (ok && info.kind == IoKind::Write) {
      ++totals.writes;
      totals.bytes_written += sc.ret;
    } else {
      ++totals.other;
    }
  }

  // The OTF2 I/O events of a syscall, inside its ENTER and LEAVE; nest() writes the VFS and FS
  // events, inside an I/O operation's begin and end.
  // nest is a lambda, not a std::function: that would allocate its captures once per call.
  template <typename Nest>
  void emit_io_events(const SyscallInfo& info, const ezio_syscall_rec& sc, const OpenCall* open,
                      const Placed& at, Nest&& nest) {
    int32_t fd = static_cast<int32_t>(sc.fd);
    bool ok = sc.ret >= 0;
    const otf2::EventWriter& evt = at.evt;
    switch (info.kind) {
      case IoKind::Read:
      case IoKind::Write:
      case IoKind::Flush:
        if (fd >= 0) emit_io_operation(info, sc, at, nest);
        break;
      case IoKind::Open:
        if (ok && open) {
          otf2::Ref h = fds_->open(sc.h.pid, sc.ret, absolute_path(*open));
          evt.io_create_handle(at.t1, h, access_mode(open->open_flags),
                               creation_flags(open->open_flags), status_flags(open->open_flags));
        }
        break;
      case IoKind::Close:
        if (ok) {
          if (auto h = fds_->close(sc.h.pid, fd)) evt.io_destroy_handle(at.t1, *h);
        }
        break;
      case IoKind::Seek:
        if (ok && fd >= 0) {
          evt.io_seek(at.t1, fds_->handle(sc.h.pid, fd), sc.offset, seek_option(sc.arg),
                      static_cast<uint64_t>(sc.ret));
        }
        break;
      case IoKind::Dup:
        if (ok && fd >= 0) {
          otf2::Ref old_h = fds_->handle(sc.h.pid, fd);
          otf2::Ref new_h = fds_->dup(sc.h.pid, fd, sc.ret);
          evt.io_duplicate_handle(at.t1, old_h, new_h, OTF2_IO_STATUS_FLAG_NONE);
        }
        break;
      case IoKind::None:
        break;
    }
  }

  // A read, write or flush: IoOperationBegin, the nested layers, IoOperationComplete (or
  // Cancelled when the call failed).
  template <typename Nest>
  void emit_io_operation(const SyscallInfo& info, const ezio_syscall_rec& sc, const Placed& at,
                         Nest&& nest) {
    otf2::Ref h = fds_->handle(sc.h.pid, static_cast<int32_t>(sc.fd));
    OTF2_IoOperationMode mode = info.kind == IoKind::Read    ? OTF2_IO_OPERATION_MODE_READ
                                : info.kind == IoKind::Write ? OTF2_IO_OPERATION_MODE_WRITE
                                                             : OTF2_IO_OPERATION_MODE_FLUSH;
    at.evt.io_operation_begin(at.t0, h, mode, OTF2_IO_OPERATION_FLAG_NONE,
                              info.kind == IoKind::Flush ? 0 : sc.count, sc.call_id);
    nest();
    if (sc.ret >= 0) {
      uint64_t done = info.kind == IoKind::Flush ? 0 : static_cast<uint64_t>(sc.ret);
      at.evt.io_operation_complete(at.t1, h, done, sc.call_id);
    } else {
      at.evt.io_operation_cancelled(at.t1, h, sc.call_id);
    }
  }

  void write_properties() {
    for (unsigned l = 0; l < EZIO_LAYER_COUNT; ++l) {
      w_.system_tree_node_property(machine_, schema::lost_property(layer_name(l)), info_.lost[l]);
      if (!info_.probes[l].empty()) {
        w_.system_tree_node_property(machine_, schema::probe_property(layer_name(l)),
                                     std::string_view(info_.probes[l]));
      }
    }
    w_.system_tree_node_property(machine_, schema::kStatus, std::string_view(info_.status));
    if (!info_.status_reason.empty()) {
      w_.system_tree_node_property(machine_, schema::kStatusReason,
                                   std::string_view(info_.status_reason));
    }
    w_.system_tree_node_property(machine_, schema::kApplicationEnd,
                                 std::string_view(info_.application_end));
    w_.system_tree_node_property(machine_, schema::kApplicationCpuNs, info_.application_cpu_ns);
    w_.system_tree_node_property(
        machine_, schema::kCommand,
        std::string_view(fmt::format("{}", fmt::join(info_.command, " "))));
    if (!info_.user_command.empty()) {
      w_.system_tree_node_property(
          machine_, schema::kUserCommand,
          std::string_view(fmt::format("{}", fmt::join(info_.user_command, " "))));
    }
    w_.system_tree_node_property(machine_, schema::kRootPid, uint64_t(info_.root_pid));
    w_.system_tree_node_property(machine_, schema::kProcessesRunningAtEnd,
                                 uint64_t(info_.still_running));
    w_.system_tree_node_property(machine_, schema::kClock, std::string_view("CLOCK_MONOTONIC"));
    if (!info_.kernel_release.empty()) {
      w_.system_tree_node_property(machine_, schema::kKernelRelease,
                                   std::string_view(info_.kernel_release));
    }
    // The recorder runs in the job's environment, as the application does.
    for (auto [name, env] : {std::pair{schema::kSlurmJobId, "SLURM_JOB_ID"},
                             std::pair{schema::kSlurmStepId, "SLURM_STEP_ID"}}) {
      if (const char* v = std::getenv(env)) {
        w_.system_tree_node_property(machine_, name, std::string_view(v));
      }
    }
    for (size_t cpu = 0; cpu < info_.lost_per_cpu.size(); ++cpu) {
      if (uint64_t n = info_.lost_per_cpu[cpu]) {
        w_.system_tree_node_property(machine_, schema::lost_on_cpu_property(cpu), n);
      }
    }
    w_.system_tree_node_property(machine_, schema::kRings, uint64_t{info_.rings});
    if (info_.ring_bytes)
      w_.system_tree_node_property(machine_, schema::kRingBytes, info_.ring_bytes);
    if (!info_.recording_path.empty()) {
      w_.system_tree_node_property(machine_, schema::kRecordingPath,
                                   std::string_view(info_.recording_path));
    }
    if (const auto& sn = info_.snapshot) {
      w_.system_tree_node_property(machine_, schema::kSnapshotJob, std::string_view(sn->job));
      w_.system_tree_node_property(machine_, schema::kSnapshotAskedStartNs, sn->asked_start_ns);
      w_.system_tree_node_property(machine_, schema::kSnapshotStartNs, sn->start_ns);
      w_.system_tree_node_property(machine_, schema::kSnapshotEndNs, sn->end_ns);
      w_.system_tree_node_property(machine_, schema::kSnapshotDropped, sn->dropped);
      if (!sn->rule.empty())
        w_.system_tree_node_property(machine_, schema::kSnapshotRule, std::string_view(sn->rule));
    }
    w_.system_tree_node_property(machine_, schema::kMonotonicStartNs, info_.start_monotonic_ns);
    w_.system_tree_node_property(machine_, schema::kRealtimeStartNs, info_.start_realtime_ns);
    w_.system_tree_node_property(machine_, schema::kRecordVersion, uint64_t(EZIO_RECORD_VERSION));
    if (!full_)
      w_.system_tree_node_property(machine_, schema::kTraceModel, schema::kTraceModelCompact);
    w_.system_tree_node_property(machine_, schema::kVersion, std::string_view(version_string()));
  }

  const RecordingInfo& info_;
  ProcessTable procs_;
  otf2::ArchiveWriter w_;
  otf2::Ref machine_ = 0;
  std::optional<FdTable> fds_;
  std::optional<NestedLayers> nested_;
  std::optional<BlockLayer> block_;
  std::optional<PageCacheLayer> pagecache_;
  Attributes attrs_{};
  bool full_ = false;                                     // trace model 1
  std::array<otf2::Ref, EZIO_MAX_SYSCALL_NR> regions_{};  // by syscall number
  std::unordered_map<uint64_t, uint64_t> last_per_location_;
  Thread thread_;
  std::unordered_map<uint32_t, otf2::Ref> groups_;  // pid -> location group
  uint64_t last_time_ = 0;
  ArchiveSummary summary_;
};

KernelArchive::KernelArchive(const std::filesystem::path& dir, const RecordingInfo& info)
    : b_(std::make_unique<Builder>(dir, info)) {}

KernelArchive::~KernelArchive() = default;

void KernelArchive::tap(otf2::EventTap* tap, bool write_events) { b_->tap(tap, write_events); }

void KernelArchive::model1() { b_->model1(); }

void KernelArchive::write_settled(RecordStore& store, uint64_t before,
                                  const std::function<void()>& meanwhile) {
  ArchiveBatch batch{store.take_settled(before), before, std::nullopt};
  index(batch);
  b_->write(batch, false, meanwhile);
}

void KernelArchive::index(ArchiveBatch& batch) { indexer_.index(batch, false); }

void KernelArchive::write_batch(ArchiveBatch&& batch) {
  if (!batch.index) index(batch);
  b_->write(batch, false);
  indexer_.recycle(std::move(*batch.index));
}

ArchiveSummary KernelArchive::finish(RecordStore& store) {
  ArchiveBatch batch{store.take_settled(UINT64_MAX), UINT64_MAX, std::nullopt};
  indexer_.index(batch, true);
  b_->write(batch, true);
  return b_->finish(store);
}

ArchiveSummary write_kernel_archive(const std::filesystem::path& dir, RecordStore& store,
                                    const RecordingInfo& info) {
  return KernelArchive(dir, info).finish(store);
}

}  // namespace ezio::recorder
