#include "converters/merge.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "common/error.h"
#include "common/otf2/reader.h"
#include "common/otf2/writer.h"
#include "common/schema/layers.h"
#include "common/schema/properties.h"
#include "converters/comm_mapper.h"
#include "converters/definition_mapper.h"
#include "converters/kernel_spans.h"

namespace ezio::converters {
namespace {

constexpr size_t kMaxDetails = 20;

// EZTrace records these before calling the real function: at equal timestamps they go before the
// kernel's events, all others after, so that the user call keeps enclosing its system call.
bool opens_a_call(EventKind k) {
  return k == EventKind::Enter || k == EventKind::ThreadBegin || k == EventKind::IoOperationBegin ||
         k == EventKind::IoDestroyHandle || k == EventKind::MpiCollectiveBegin;
}

// User calls that always reach the kernel: the system calls each must contain.
const std::map<std::string, std::set<std::string>, std::less<>>& direct_calls() {
  static const std::set<std::string> opens = {"syscall:open", "syscall:openat", "syscall:openat2",
                                              "syscall:creat"};
  static const std::map<std::string, std::set<std::string>, std::less<>> m = {
      {"open", opens},
      {"open64", opens},
      {"openat", opens},
      {"openat64", opens},
      {"creat", opens},
      {"fopen", opens},
      {"read", {"syscall:read"}},
      {"write", {"syscall:write"}},
      {"pread", {"syscall:pread64"}},
      {"pwrite", {"syscall:pwrite64"}},
      {"readv", {"syscall:readv"}},
      {"writev", {"syscall:writev"}},
      {"close", {"syscall:close"}},
      {"fclose", {"syscall:close"}},
      {"lseek", {"syscall:lseek"}},
  };
  return m;
}

struct KernelProcess {
  uint32_t pid = 0, ppid = 0;
  Ref group = 0;
  std::map<uint32_t, OTF2_LocationRef> threads;  // tid -> location
};

struct Merger {
  const std::vector<EztraceInput>& inputs;
  const std::vector<Sidecar>& images;  // every image's record, with an archive or not
  std::vector<std::string> own_dirs;
  KernelIndex kernel;  // span summaries; the events are read again to be written
  std::optional<otf2::ArchiveReader> rereader;  // reads the kernel's events to write them
  std::map<const EztraceArchive*, std::unique_ptr<otf2::ArchiveReader>> user_readers;
  MergeReport report;

  std::map<uint32_t, KernelProcess> kprocs;
  std::map<Ref, std::vector<OTF2_LocationRef>> group_locations;  // all of a process's locations
  std::set<OTF2_LocationRef> dropped_locations;
  std::set<uint32_t> dropped_pids;        // EZTrace's own processes
  std::set<std::string> traced_syscalls;  // kernel regions defined: what the recorder watched

  Merger(const std::vector<EztraceInput>& in, const std::vector<Sidecar>& im,
         const std::filesystem::path& kernel_anchor, const std::filesystem::path& out_dir,
         const std::vector<std::filesystem::path>& dirs)
      : inputs(in), images(im) {
    for (const auto& d : dirs) own_dirs.push_back(d.lexically_normal().string());
    for (const auto& i : inputs) own_dirs.push_back(i.process.trace_dir().string());
    for (const auto& i : im) own_dirs.push_back(i.trace_dir().string());
    // The span summaries go next to the output, on its file system.
    kernel = index_kernel_spans(kernel_anchor, own_dirs,
                                std::filesystem::absolute(out_dir).parent_path());
  }

  // The spans of a kernel location, nullptr when it has no events.
  KernelLocation* kernel_location(OTF2_LocationRef loc) {
    auto it = kernel.locations.find(loc);
    return it == kernel.locations.end() ? nullptr : &it->second;
  }

  void index_kernel() {
    const Definitions& d = kernel.defs;
    for (const auto& [ref, r] : d.regions) traced_syscalls.insert(d.str(r.canonical));
    for (const auto& [loc, def] : d.locations) {
      group_locations[def.group].push_back(loc);
      auto pid = d.group_property(def.group, schema::kPid);
      auto tid = d.location_property(loc, schema::kTid);
      if (!pid || !tid) continue;  // device and other asynchronous locations
      KernelProcess& p = kprocs[static_cast<uint32_t>(*pid)];
      p.pid = static_cast<uint32_t>(*pid);
      p.ppid = static_cast<uint32_t>(d.group_property(def.group, schema::kPpid).value_or(0));
      p.group = def.group;
      p.threads.emplace(static_cast<uint32_t>(*tid), loc);
    }
  }

  // The events of the process's own locations of its archive.
  static const UserLocation* events_of(const EztraceInput& in, OTF2_LocationRef loc) {
    auto it = in.archive->locations.find(loc);
    return it == in.archive->locations.end() ? nullptr : &it->second;
  }

  static uint64_t first_user_time(const EztraceInput& in) {
    uint64_t t = std::numeric_limits<uint64_t>::max();
    for (OTF2_LocationRef loc : in.locations) {
      if (auto ev = events_of(in, loc); ev && ev->events) t = std::min(t, ev->first_time);
    }
    return t == std::numeric_limits<uint64_t>::max() ? 0 : t + in.process.time_offset();
  }

  // EZTrace's finalization: from its "EZTrace finalize" region on (kNever: none).
  static uint64_t finalize_time(const EztraceInput& in) {
    for (OTF2_LocationRef loc : in.locations) {
      const auto* ev = events_of(in, loc);
      if (ev && ev->finalizes) return ev->finalize_time + in.process.time_offset();
    }
    return std::numeric_limits<uint64_t>::max();
  }

  // True when the span touches a file under dir (only spans under the own directories can).
  static bool touches_files_under(const KernelLocation& kl, size_t span, const std::string& dir) {
    auto files = kl.own_files.find(span);
    if (files == kl.own_files.end()) return false;
    const std::vector<std::string> dirs = {dir};
    for (const std::string* f : files->second) {
      if (path_under(*f, dirs)) return true;
    }
    return false;
  }

  // Block requests whose call.id is a dropped call are that call's I/O: dropped with it, so that
  // no link points to a call the archive no longer has.
  void filter_caused_requests() {
    std::set<uint64_t> dropped_calls;
    for (const auto& [loc, kl] : kernel.locations) {
      for (size_t i = 0; i < kl.spans.size(); ++i) {
        const Span& s = kl.spans.get(i);
        if (s.dropped && s.enter && s.call_id) dropped_calls.insert(s.call_id);
      }
    }
    if (dropped_calls.empty()) return;
    for (auto& [loc, kl] : kernel.locations) {
      std::set<std::pair<Ref, uint64_t>> requests;  // (handle, matching id)
      for (const auto& [i, r] : kl.requests) {
        const Span& s = kl.spans.get(i);
        if (r.begin && !s.dropped && dropped_calls.count(s.call_id)) {
          requests.insert({r.handle, r.id});
        }
      }
      if (requests.empty()) continue;
      report.own_io_block_requests += requests.size();
      for (const auto& [i, r] : kl.requests) {
        if (requests.count({r.handle, r.id})) kl.spans.mut(i).dropped = true;
      }
    }
  }

  // EZTrace's work in one process image, as times on CLOCK_MONOTONIC (docs/merge.md, "EZTrace's
  // own I/O"). An image without an archive (it exec'd, ended with _exit, or EZTrace wrote nothing)
  // still has its start-up window: the helper wrote its record when main started.
  struct ImageWindows {
    uint64_t init_begin = 0, init_end = 0;  // helper constructor .. the program's main
    uint64_t fin_begin = kNever;            // EZTrace's finalization starts
    std::filesystem::path trace_dir;        // ends with its last write there
    uint64_t helper_begin = 0;              // the helper's exit record: exit_ns ..
  };
  static constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();

  static ImageWindows windows_of(const Sidecar& image, const EztraceInput* in) {
    ImageWindows w;
    uint64_t first_event = in ? first_user_time(*in) : 0;
    w.init_end = image.main_ns;
    if (first_event && (!w.init_end || first_event < w.init_end)) w.init_end = first_event;
    w.init_begin = image.ctor_before_eztrace ? image.ctor_ns : w.init_end;
    if (image.finalize_ns) w.fin_begin = image.finalize_ns;
    if (in) w.fin_begin = std::min(w.fin_begin, finalize_time(*in));
    w.trace_dir = image.trace_dir();
    w.helper_begin = image.exited ? image.exit_ns : 0;
    return w;
  }

  // Drops the calls of a process inside its images' windows of EZTrace's (and the helper's) work.
  void drop_image_windows(const KernelProcess& kp, const ImageWindows& w) {
    const std::string trace_dir = w.trace_dir.string();
    // EZTrace's finalization ends with its last write into its trace directory; the helper's
    // work runs from its exit_ns to its write into the sidecar directory. What lies between
    // (the rest of MPI_Finalize, the program after it) is the application's.
    uint64_t fin_end = w.fin_begin, helper_end = w.helper_begin;
    for (const auto& [tid, loc] : kp.threads) {
      const KernelLocation* kl = kernel_location(loc);
      for (size_t i = 0; kl && i < kl->spans.size(); ++i) {
        const Span& s = kl->spans.get(i);
        if (!s.dropped) continue;
        if (s.t0 >= w.fin_begin && touches_files_under(*kl, i, trace_dir)) {
          fin_end = std::max(fin_end, s.t1);
        }
        if (w.helper_begin && s.t0 >= w.helper_begin) helper_end = std::max(helper_end, s.t1);
      }
    }
    for (const auto& [tid, loc] : kp.threads) {
      KernelLocation* kl = kernel_location(loc);
      if (!kl) continue;
      for (size_t i = 0; i < kl->spans.size(); ++i) {
        Span& s = kl->spans.mut(i);
        if ((s.t0 >= w.init_begin && s.t0 < w.init_end) ||
            (s.t0 >= w.fin_begin && s.t0 <= fin_end) ||
            (w.helper_begin && s.t0 >= w.helper_begin && s.t0 <= helper_end)) {
          s.dropped = true;
        }
      }
    }
  }

  // True when every call of the process lies inside [begin, end).
  bool lives_inside(const KernelProcess& p, uint64_t begin, uint64_t end) {
    for (const auto& [tid, loc] : p.threads) {
      const KernelLocation* kl = kernel_location(loc);
      if (!kl) continue;
      for (size_t i = 0; i < kl->spans.size(); ++i) {
        const Span& s = kl->spans.get(i);
        if (s.t0 < begin || s.t1 > end) return false;
      }
    }
    return true;
  }

  // EZTrace's `rm -rf` child (traced by EZTrace itself when the environment reaches it) and its
  // own children: the children of an image that live only inside that image's start-up window.
  void drop_startup_children(const std::vector<std::pair<uint32_t, ImageWindows>>& windows) {
    std::set<uint32_t> dropped;
    for (const auto& [pid, w] : windows) {
      for (const auto& [cpid, child] : kprocs) {
        if (child.ppid == pid && w.init_end > w.init_begin &&
            lives_inside(child, w.init_begin, w.init_end)) {
          dropped.insert(cpid);
        }
      }
    }
    for (bool grew = true; grew;) {  // and their descendants
      grew = false;
      for (const auto& [cpid, child] : kprocs) {
        if (dropped.count(child.ppid) && dropped.insert(cpid).second) grew = true;
      }
    }
    for (uint32_t pid : dropped) {
      ++report.own_io_processes;
      dropped_pids.insert(pid);
      // All its locations: threads and their page-cache metric locations.
      for (OTF2_LocationRef loc : group_locations[kprocs[pid].group]) {
        dropped_locations.insert(loc);
      }
    }
  }

  // Drops EZTrace's own I/O from the kernel side (see docs/merge.md, "EZTrace's own I/O"), for
  // every image the helper saw, whether EZTrace wrote its archive or not.
  void filter_own_io() {
    std::map<std::pair<uint32_t, uint64_t>, const EztraceInput*> traced;
    for (const auto& in : inputs) traced[{in.process.pid, in.process.ctor_ns}] = &in;
    std::map<std::pair<uint32_t, uint64_t>, const Sidecar*> all;
    for (const auto& in : inputs) all[{in.process.pid, in.process.ctor_ns}] = &in.process;
    for (const auto& image : images) all.emplace(std::pair{image.pid, image.ctor_ns}, &image);
    // 1. Calls on files under a trace directory or the sidecar directory, anywhere.
    for (auto& [loc, kl] : kernel.locations) {
      for (size_t i = 0; i < kl.spans.size(); ++i) {
        Span& s = kl.spans.mut(i);
        s.dropped = s.own;
      }
    }
    // 2. The calls of each image inside EZTrace's start-up and finalization windows.
    std::vector<std::pair<uint32_t, ImageWindows>> windows;
    for (const auto& [key, image] : all) {
      auto in = traced.find(key);
      windows.emplace_back(image->pid,
                           windows_of(*image, in == traced.end() ? nullptr : in->second));
      if (auto kp = kprocs.find(image->pid); kp != kprocs.end()) {
        drop_image_windows(kp->second, windows.back().second);
      }
    }
    // 3. The children EZTrace starts in its start-up window, with all their locations.
    drop_startup_children(windows);
    for (auto& [loc, kl] : kernel.locations) {
      const bool all = dropped_locations.count(loc);
      for (size_t i = 0; i < kl.spans.size(); ++i) {
        if (all) kl.spans.mut(i).dropped = true;
        const Span& s = kl.spans.get(i);
        if (s.dropped && !s.call->empty()) ++report.own_io_calls;  // calls, not metric samples
      }
    }
    filter_caused_requests();
  }

  // Processes with calls in the archive but no EZTrace trace merged (forked without exec, EZTrace
  // not loaded, or it wrote nothing): said in the report and the archive, never left silent.
  void find_untraced() {
    std::set<uint32_t> traced;
    for (const auto& in : inputs) traced.insert(in.process.pid);
    std::map<uint32_t, const Sidecar*> started;  // an image of the pid loaded EZTrace
    for (const auto& image : images) started[image.pid] = &image;
    for (const auto& [pid, p] : kprocs) {
      if (traced.count(pid) || dropped_pids.count(pid)) continue;
      bool calls = false;
      for (const auto& [tid, loc] : p.threads) {
        const KernelLocation* kl = kernel_location(loc);
        for (size_t i = 0; kl && i < kl->spans.size(); ++i) {
          const Span& s = kl->spans.get(i);
          calls = calls || (!s.dropped && !s.call->empty());
        }
      }
      if (!calls) continue;
      auto g = kernel.defs.location_groups.find(p.group);
      std::string name = g == kernel.defs.location_groups.end() ? fmt::format("[{}]", pid)
                                                                : kernel.defs.str(g->second.name);
      report.untraced_pids.push_back(pid);
      report.untraced.push_back(
          started.count(pid)
              ? fmt::format("{}: EZTrace started in it but wrote no trace (it exec'd another "
                            "program or ended without exit handlers)",
                            name)
              : fmt::format("{}: not traced by EZTrace (forked without exec, or EZTrace not "
                            "loaded)",
                            name));
    }
  }

  void violation(std::string text) {
    ++report.violations;
    if (report.violation_details.size() < kMaxDetails) {
      report.violation_details.push_back(std::move(text));
    }
  }

  // What the check needs of a user region, found once per region (not per event).
  struct RegionCheck {
    std::string name;
    const std::set<std::string>* syscalls = nullptr;  // it must contain one of these
    bool watched = false;                             // the kernel archive defines one of them
  };
  // A user call open on a thread's stack while its system calls go by.
  struct OpenCall {
    const RegionCheck* check;
    uint64_t time;
    bool satisfied;
    bool destroys_handle = false;  // a user IoDestroyHandle inside it
  };

  // The user call closed by a LEAVE at time `end`: checked for the system call it must contain.
  void check_call(const OpenCall& o, uint64_t end, uint32_t tid) {
    const std::string& name = o.check->name;
    bool watched = o.check->watched;
    if (watched && name == "close" && !o.satisfied && !o.destroys_handle) {
      // EZTrace 2.0's close() wrapper calls the real close only for an fd it saw opened
      // (strace: close(0), close(1), close(77) make no system call under it; the fd stays
      // open). Such a call is EZTrace's doing, not a misalignment.
      ++report.closes_without_syscall;
      watched = false;
    }
    if (watched) {
      ++report.checked_calls;
      if (!o.satisfied) {
        violation(fmt::format("tid {}: user call {} [{}, {}] contains no {} system call", tid, name,
                              o.time, end, name));
      }
    }
  }

  // The merged order of a thread: kernel span s goes before user event u (time on
  // CLOCK_MONOTONIC: ut) when it starts earlier, or at the same time unless u opens a call.
  static bool kernel_first(const Span& s, const Event& u, uint64_t ut) {
    return s.t0 < ut || (s.t0 == ut && !opens_a_call(u.kind));
  }

  // Walks a thread's user events as they are read (times + t0 on CLOCK_MONOTONIC) and its
  // kernel spans in merged order: checks that every system call lies inside the user call around
  // it, and ties a user IoCreateHandle to the file of the kernel open inside the same user call.
  class ThreadChecker : public otf2::EventVisitor {
   public:
    ThreadChecker(Merger& m, const EztraceInput& in, const SpanList* kspans, uint32_t tid,
                  std::map<Ref, std::string>& tied)
        : m_(m),
          ud_(in.archive->defs),
          t0_(in.process.time_offset()),
          kspans_(kspans),
          tid_(tid),
          tied_(tied) {}

    void event(OTF2_LocationRef, const Event& e) override {
      spans_before(&e);
      user(e);
    }
    // After the last user event: the kernel spans left.
    void finish() { spans_before(nullptr); }

   private:
    // The kernel spans that go before user event u (all of them for nullptr).
    void spans_before(const Event* u) {
      const size_t nk = kspans_ ? kspans_->size() : 0;
      for (;; ++j_) {
        while (j_ < nk && kspans_->get(j_).dropped) ++j_;
        if (j_ == nk) return;
        const Span& s = kspans_->get(j_);
        if (u && !kernel_first(s, *u, u->time + t0_)) return;
        if (u && s.t1 > u->time + t0_) {
          m_.violation(fmt::format("tid {}: kernel {} [{}, {}] crosses user {} at {}", tid_,
                                   *s.call, s.t0, s.t1, event_kind_name(u->kind), u->time + t0_));
        }
        for (OpenCall& o : stack_) {
          if (o.check->syscalls && o.check->syscalls->count(*s.call)) o.satisfied = true;
        }
        if (s.created != kNoHandle) kernel_file_ = m_.kernel.defs.handle_path(s.created);
      }
    }

    void user(const Event& e) {
      if (e.kind == EventKind::Enter) {
        if (stack_.empty()) kernel_file_.reset();
        stack_.push_back({&check_of(e.ref), e.time + t0_, false});
      } else if (e.kind == EventKind::Leave && !stack_.empty()) {
        m_.check_call(stack_.back(), e.time + t0_, tid_);
        stack_.pop_back();
      }
      if (e.kind == EventKind::IoDestroyHandle && !stack_.empty())
        stack_.back().destroys_handle = true;
      if (e.kind == EventKind::IoCreateHandle && kernel_file_) tied_[e.ref] = *kernel_file_;
    }

    const RegionCheck& check_of(Ref region) {
      auto [it, added] = checks_.try_emplace(region);
      if (!added) return it->second;
      RegionCheck& c = it->second;
      if (auto r = ud_.regions.find(region); r != ud_.regions.end()) {
        c.name = ud_.str(r->second.name);
      }
      if (auto d = direct_calls().find(c.name); d != direct_calls().end()) {
        c.syscalls = &d->second;
        for (const auto& sc : d->second) c.watched = c.watched || m_.traced_syscalls.count(sc);
      }
      c.watched = c.watched && kspans_;
      return c;
    }

    Merger& m_;
    const Definitions& ud_;
    const uint64_t t0_;
    const SpanList* kspans_;
    const uint32_t tid_;
    std::map<Ref, std::string>& tied_;
    std::map<Ref, RegionCheck> checks_;
    std::vector<OpenCall> stack_;
    std::optional<std::string> kernel_file_;  // of the last kernel open in the outer user call
    size_t j_ = 0;
  };

  // The reader of an EZTrace archive (shared by the MPI ranks that wrote it), opened once.
  otf2::ArchiveReader& user_reader(const EztraceInput& in) {
    auto& r = user_readers[in.archive.get()];
    if (!r) r = std::make_unique<otf2::ArchiveReader>(in.archive->anchor);
    return *r;
  }

  void check_thread(const EztraceInput& in, OTF2_LocationRef eloc, bool user_events,
                    const SpanList* kspans, uint32_t tid, std::map<Ref, std::string>& tied) {
    ThreadChecker checker(*this, in, kspans, tid, tied);
    if (user_events) {
      otf2::ReadOptions options;
      options.lenient = true;  // EZTrace's counts are wrong
      options.select = [eloc](OTF2_LocationRef l) { return l == eloc; };
      user_reader(in).read_events(checker, options);
    }
    checker.finish();
  }

  // Writes kernel locations as their events are read again (read_kernel), without the spans
  // the filter dropped, each with its thread's user events (set_user) in merged order. Holds no
  // events: each is written as it is read.
  class SpanWriter : public otf2::EventVisitor {
   public:
    using WriteKernel = std::function<void(OTF2_LocationRef, const Event&)>;
    using WriteUser = std::function<void(const Event&, uint64_t time)>;
    SpanWriter(Merger& m, WriteKernel write_kernel)
        : m_(m), write_kernel_(std::move(write_kernel)) {}

    // The user events (times + t0 on CLOCK_MONOTONIC) of the next location read, if any.
    void set_user(otf2::LocationStream* user, uint64_t t0, WriteUser write_user) {
      user_ = user;
      t0_ = t0;
      pending_ = user ? user->next() : nullptr;
      write_user_ = std::move(write_user);
    }
    // Writes the user events after the last kernel span.
    void finish_user() {
      while (pending_) write_next_user();
    }

    void begin_location(OTF2_LocationRef loc) override {
      loc_ = loc;
      spans_ = &m_.kernel.locations.at(loc).spans;
      next_ = 0;
      cutter_ = SpanCutter();
      writing_ = false;
    }
    void event(OTF2_LocationRef, const Event& e) override {
      if (cutter_.complete()) start_span();  // e opens the next span
      if (writing_) write_kernel_(loc_, e);
      cutter_.add(e);
    }
    void end_location(OTF2_LocationRef loc) override {
      if (next_ != spans_->size()) changed();
      if (location_done_) location_done_(loc);
    }
    // Called after each location read (not for a thread's user events after its last span).
    void on_location_done(std::function<void(OTF2_LocationRef)> done) {
      location_done_ = std::move(done);
    }

   private:
    // A span's place among the user events depends on its start only: its events are written
    // as they are read (a span left open by a lost LEAVE may be long).
    void start_span() {
      if (next_ == spans_->size()) changed();
      const Span& s = spans_->get(next_++);
      writing_ = !s.dropped;
      if (writing_) {
        while (pending_ && !kernel_first(s, *pending_, pending_->time + t0_)) write_next_user();
      }
    }
    void write_next_user() {
      write_user_(*pending_, pending_->time + t0_);
      pending_ = user_->next();
    }
    [[noreturn]] void changed() const {
      fail("{}: the kernel archive changed while it was merged (location {})",
           m_.kernel.anchor.string(), loc_);
    }

    Merger& m_;
    WriteKernel write_kernel_;
    WriteUser write_user_;
    std::function<void(OTF2_LocationRef)> location_done_;
    otf2::LocationStream* user_ = nullptr;
    const Event* pending_ = nullptr;  // the next user event, not written yet
    uint64_t t0_ = 0;
    OTF2_LocationRef loc_ = 0;
    const SpanList* spans_ = nullptr;
    size_t next_ = 0;
    SpanCutter cutter_;
    bool writing_ = false;  // the current span is written (not dropped)
  };

  // Reads the selected kernel locations' events again, in the order of their ids, into writer.
  void read_kernel(const std::function<bool(OTF2_LocationRef)>& select, SpanWriter& writer) {
    // One reader for all: opening one reads the global definitions again.
    if (!rereader) rereader.emplace(kernel.anchor);
    otf2::ArchiveReader& reader = *rereader;
    otf2::ReadOptions options;
    options.lenient = true;  // as index_kernel_spans read it
    options.select = select;
    reader.read_events(writer, options);
  }

  // What the archive holds of the user level: EZIOTRACE::USER_LEVEL says it in words, the
  // processes without an EZTrace trace are counted and named.
  void write_user_level(otf2::ArchiveWriter& w, otf2::Ref machine) {
    std::string pids;
    for (uint32_t pid : report.untraced_pids)
      pids += fmt::format("{}{}", pids.empty() ? "" : " ", pid);
    w.system_tree_node_property(machine, schema::kProcessesWithoutUserTrace,
                                report.untraced_pids.size());
    w.system_tree_node_property(machine, schema::kPidsWithoutUserTrace, std::string_view(pids));
    std::string level = "complete";
    if (report.processes == 0) {
      level = "missing: EZTrace wrote no trace, the archive holds the kernel layers only";
    } else if (!report.untraced_pids.empty()) {
      level = fmt::format(
          "partial: {} process(es) with kernel events have no EZTrace trace "
          "(EZIOTRACE::PIDS_WITHOUT_USER_TRACE)",
          report.untraced_pids.size());
    }
    w.system_tree_node_property(machine, schema::kUserLevel, std::string_view(level));
    report.user_level = level;
  }

  void run(const std::filesystem::path& out_dir) {
    index_kernel();
    filter_own_io();
    find_untraced();

    otf2::ArchiveWriter w(out_dir);
    const Definitions& kd = kernel.defs;
    std::string host = "localhost";
    Ref knode = OTF2_UNDEFINED_SYSTEM_TREE_NODE;
    if (!kd.nodes.empty()) {
      knode = kd.nodes.begin()->first;
      host = kd.str(kd.nodes.begin()->second.name);
    }
    otf2::Ref machine = w.system_tree_node(host, "machine");
    CommMapper comms(w);
    for (const auto& in : inputs) comms.add_archive(in.archive->defs);
    SharedDefinitions shared{w, machine, comms, {}};
    DefinitionMapper kmap(kd, shared);

    // Locations: the kernel's, minus dropped ones, keeping their ids (TIDs).
    std::map<Ref, otf2::Ref> groups;
    auto group_of = [&](Ref kgroup) {
      if (auto it = groups.find(kgroup); it != groups.end()) return it->second;
      auto g = kd.location_groups.find(kgroup);
      std::string name = g == kd.location_groups.end() ? "unknown" : kd.str(g->second.name);
      OTF2_LocationGroupType type = OTF2_LOCATION_GROUP_TYPE_PROCESS;
      if (g != kd.location_groups.end()) type = g->second.type;
      otf2::Ref out = w.location_group(name, type, machine);
      for (const auto& p : kd.group_properties) {
        if (p.owner == kgroup && p.type == OTF2_TYPE_UINT64) {
          w.location_group_property(out, kd.str(p.name), p.value.uint64);
        }
      }
      return groups[kgroup] = out;
    };
    std::set<OTF2_LocationRef> used_ids;
    // Ids of locations the merge adds: above every id of the kernel archive, dropped ones too.
    uint64_t spare_id = uint64_t(4) << 32;
    for (const auto& [loc, def] : kd.locations) spare_id = std::max(spare_id, loc + 1);
    for (const auto& [loc, def] : kd.locations) {
      if (dropped_locations.count(loc)) continue;
      w.location(loc, kd.str(def.name), def.type, group_of(def.group));
      used_ids.insert(loc);
      for (const auto& p : kd.location_properties) {
        if (p.location == loc && p.type == OTF2_TYPE_UINT64) {
          w.location_property(loc, kd.str(p.name), p.value.uint64);
        }
      }
    }

    uint64_t t_min = kd.global_offset, t_max = kd.global_offset + kd.trace_length;
    std::map<OTF2_LocationRef, uint64_t> last;  // per output location, to keep time ordered
    auto stamp = [&](OTF2_LocationRef loc, uint64_t t) {
      uint64_t& l = last[loc];
      if (t < l) {
        ++report.clamped_events;
        t = l;
      }
      l = t;
      t_min = std::min(t_min, t);
      t_max = std::max(t_max, t);
      return t;
    };
    SpanWriter writer(*this, [&](OTF2_LocationRef loc, const Event& e) {
      kmap.write(w.events(loc), e, stamp(loc, e.time));
      ++report.kernel_events;
    });

    // Threads that EZTrace traced: user events and kernel spans on one location.
    std::set<OTF2_LocationRef> merged_kernel;
    // (input archive, EZTrace location) -> merged location, for the ranks of communicators.
    std::map<std::pair<const Definitions*, uint64_t>, OTF2_LocationRef> user_locations;
    std::set<const EztraceArchive*> archives;
    struct Thread {
      OTF2_LocationRef out_loc;
      OTF2_LocationRef user_loc;  // EZTrace's location
      bool user_events;           // it has an event file
      bool kernel_events;         // the kernel location out_loc has events to merge
    };
    struct Process {
      // The user handle -> kernel file tie, found while interleaving, used when writing.
      std::map<Ref, std::string> tied;
      std::vector<Thread> threads;
    };
    // Pass 1: every user thread's location and merged order. The ranks of the communicators are
    // then known, and OTF2 wants them (COMM_LOCATIONS) defined before the groups that use them.
    std::vector<Process> processes(inputs.size());
    for (size_t pi = 0; pi < inputs.size(); ++pi) {
      const EztraceInput& in = inputs[pi];
      if (dropped_pids.count(in.process.pid)) continue;  // EZTrace's own `rm`, traced by EZTrace
      ++report.processes;
      if (archives.insert(in.archive.get()).second) {
        report.unsupported_events += in.archive->unsupported_events;
      }
      const Sidecar& p = in.process;
      auto kp = kprocs.find(p.pid);
      std::map<Ref, std::string>& tied = processes[pi].tied;
      std::vector<Thread>& threads = processes[pi].threads;
      for (OTF2_LocationRef eloc : in.locations) {
        const UserLocation* found = events_of(in, eloc);
        auto th = std::find_if(p.threads.begin(), p.threads.end(),
                               [&](const EztraceThread& t) { return t.location == eloc; });
        if (!found && th == p.threads.end()) continue;  // defined, never used
        if (th == p.threads.end()) {
          report.warnings.push_back(fmt::format(
              "{} [{}]: EZTrace location {} has no thread in the alignment data; its {} events "
              "are written on a location of their own",
              p.program, p.pid, eloc, found ? found->events : 0));
        }
        uint32_t tid = th == p.threads.end() ? 0 : th->tid;
        Thread t{0, eloc, found != nullptr, false};
        const SpanList* kspans = nullptr;
        if (kp != kprocs.end() && tid) {
          if (auto kl = kp->second.threads.find(tid); kl != kp->second.threads.end()) {
            t.out_loc = kl->second;
            if (KernelLocation* events = kernel_location(kl->second)) {
              t.kernel_events = true;
              kspans = &events->spans;
            }
            merged_kernel.insert(kl->second);
          }
        }
        if (!used_ids.count(t.out_loc) || !t.out_loc) {
          // No kernel location for this thread: define one, in the process's group.
          OTF2_LocationRef id =
              tid && !kd.locations.count(tid) && !used_ids.count(tid) ? tid : spare_id++;
          otf2::Ref g;
          if (kp != kprocs.end()) {
            g = group_of(kp->second.group);
          } else {
            g = w.location_group(fmt::format("{} [{}]", p.program, p.pid),
                                 OTF2_LOCATION_GROUP_TYPE_PROCESS, machine);
            w.location_group_property(g, schema::kPid, p.pid);
            w.location_group_property(g, schema::kPpid, p.ppid);
            kprocs[p.pid].group = OTF2_UNDEFINED_LOCATION_GROUP;
          }
          w.location(id, fmt::format("{} [{}]", p.program, tid ? tid : id),
                     OTF2_LOCATION_TYPE_CPU_THREAD, g);
          if (tid) w.location_property(id, schema::kTid, tid);
          used_ids.insert(id);
          t.out_loc = id;
        }
        if (th != p.threads.end()) {
          w.location_property(t.out_loc, schema::kEztraceThreadRank,
                              static_cast<uint64_t>(th->rank));
        }
        user_locations[{&in.archive->defs, eloc}] = t.out_loc;
        check_thread(in, eloc, t.user_events, kspans, tid, tied);
        threads.push_back(t);
      }
    }

    // Ranks of EZTrace's communicators: the merged locations of their threads. A rank whose
    // process left no alignment data still needs a location for the ranks to stay in place.
    comms.define_locations([&](const Definitions& defs, uint64_t eloc) {
      if (auto it = user_locations.find({&defs, eloc}); it != user_locations.end()) {
        return it->second;
      }
      OTF2_LocationRef id = spare_id++;
      otf2::Ref g = w.location_group(fmt::format("EZTrace location {} (no alignment data)", eloc),
                                     OTF2_LOCATION_GROUP_TYPE_PROCESS, machine);
      w.location(id, fmt::format("EZTrace location {}", eloc), OTF2_LOCATION_TYPE_CPU_THREAD, g);
      user_locations[{&defs, eloc}] = id;
      return id;
    });

    // Pass 2: the events, one output location after the other.
    std::map<OTF2_LocationRef, size_t> writes_left;
    for (const Process& process : processes) {
      for (const Thread& t : process.threads) ++writes_left[t.out_loc];
    }
    for (size_t pi = 0; pi < inputs.size(); ++pi) {
      const EztraceInput& in = inputs[pi];
      const Sidecar& p = in.process;
      if (dropped_pids.count(p.pid)) continue;
      auto kp = kprocs.find(p.pid);
      const std::map<Ref, std::string>& tied = processes[pi].tied;
      auto cwd = p.cwd;
      const Definitions& ud = in.archive->defs;
      DefinitionMapper umap(ud, shared, [&tied, &ud, cwd](Ref h) {
        if (auto it = tied.find(h); it != tied.end()) return std::optional<std::string>(it->second);
        // Not tied (no kernel open seen): resolve the name as EZTrace's path, like the kernel.
        auto d = ud.io_handles.find(h);
        if (d == ud.io_handles.end() || ud.io_files.count(d->second.file))
          return std::optional<std::string>();
        std::filesystem::path name = ud.str(d->second.name);
        if (name.empty()) return std::optional<std::string>();
        if (name.is_relative()) name = cwd / name;
        return std::optional<std::string>(name.lexically_normal().string());
      });
      if (kp != kprocs.end() && kp->second.group != OTF2_UNDEFINED_LOCATION_GROUP) {
        otf2::Ref g = group_of(kp->second.group);
        w.location_group_property(g, schema::kEztraceFirstTimestamp, p.first_timestamp);
        // CLOCK_MONOTONIC - EZTrace time; differs from first_timestamp with EZTrace's MPI clock.
        w.location_group_property(g, schema::kEztraceTimeOffset, p.time_offset());
        w.location_group_property(g, schema::kEztraceClockErrorNs, p.clock_offset_error_ns);
      }
      for (const Thread& t : processes[pi].threads) {
        std::optional<otf2::LocationStream> user;
        if (t.user_events) user.emplace(user_reader(in), t.user_loc, true);
        writer.set_user(user ? &*user : nullptr, p.time_offset(),
                        [&, out = t.out_loc](const Event& e, uint64_t t) {
                          umap.write(w.events(out), e, stamp(out, t));
                          ++report.user_events;
                        });
        if (t.kernel_events)
          read_kernel([&t](OTF2_LocationRef l) { return l == t.out_loc; }, writer);
        writer.finish_user();
        // Written out now, unless another EZTrace thread shares it: memory stays per location.
        if (--writes_left[t.out_loc] == 0) w.finish_events(t.out_loc);
      }
    }

    // Everything else of the kernel archive, as it is (minus EZTrace's own I/O).
    writer.set_user(nullptr, 0, {});
    writer.on_location_done([&w](OTF2_LocationRef l) { w.finish_events(l); });
    read_kernel(
        [&](OTF2_LocationRef l) { return !merged_kernel.count(l) && !dropped_locations.count(l); },
        writer);
    report.unsupported_events += kernel.unsupported_events;

    report.comms = comms.comms_written();
    report.groups = comms.groups_written();

    // Global facts: the kernel's properties, and what the merge found.
    for (const auto& p : kd.node_properties) {
      if (p.owner != knode) continue;
      OTF2_AttributeValue v = p.value;
      if (p.type == OTF2_TYPE_STRING) v.stringRef = w.string(kd.str(v.stringRef));
      w.system_tree_node_property(machine, kd.str(p.name), p.type, v);
    }
    w.system_tree_node_property(machine, schema::kAlignmentViolations, report.violations);
    w.system_tree_node_property(machine, schema::kAlignmentCheckedCalls, report.checked_calls);
    w.system_tree_node_property(machine, schema::kEztraceClosesWithoutSyscall,
                                report.closes_without_syscall);
    w.system_tree_node_property(machine, schema::kEztraceProcesses, report.processes);
    w.system_tree_node_property(machine, schema::kEztraceOwnIoFiltered, report.own_io_calls);
    write_user_level(w, machine);
    w.system_tree_node_property(
        machine, schema::kAlignment,
        std::string_view(report.violations ? "MISALIGNED: see EZIOTRACE::ALIGNMENT_VIOLATIONS"
                                           : "exact"));
    uint64_t realtime = kd.realtime;
    if (realtime != OTF2_UNDEFINED_TIMESTAMP && t_min < kd.global_offset) {
      realtime -= kd.global_offset - t_min;
    }
    w.clock({1'000'000'000, t_min, t_max - t_min, realtime});
    w.close();
  }
};

}  // namespace

std::string_view region_layer(std::string_view canonical) {
  for (std::string_view layer : schema::kKernelIoLayers) {
    if (canonical.size() > layer.size() && canonical.substr(0, layer.size()) == layer &&
        canonical[layer.size()] == ':') {
      return layer;
    }
  }
  return {};
}

bool is_user_event(const Definitions& d, const Event& e) {
  switch (e.kind) {
    case EventKind::Enter:
    case EventKind::Leave: {
      auto r = d.regions.find(e.ref);
      return r == d.regions.end() || region_layer(d.str(r->second.canonical)).empty();
    }
    case EventKind::ThreadBegin:
    case EventKind::ThreadEnd:
      return true;
    case EventKind::Metric:
      return false;
    case EventKind::MpiSend:
    case EventKind::MpiIsend:
    case EventKind::MpiIsendComplete:
    case EventKind::MpiIrecvRequest:
    case EventKind::MpiRecv:
    case EventKind::MpiIrecv:
    case EventKind::MpiRequestTest:
    case EventKind::MpiRequestCancelled:
    case EventKind::MpiCollectiveBegin:
    case EventKind::MpiCollectiveEnd:
      return true;  // the kernel side has no MPI events
    case EventKind::IoDeleteFile:
      return d.str(d.io_paradigms.count(e.ref) ? d.io_paradigms.at(e.ref).identification
                                               : OTF2_UNDEFINED_STRING) != "linux";
    default: {
      auto h = d.io_handles.find(e.ref);
      if (h == d.io_handles.end()) return true;
      auto p = d.io_paradigms.find(h->second.paradigm);
      return p == d.io_paradigms.end() || d.str(p->second.identification) != "linux";
    }
  }
}

MergeReport merge_archives(const std::vector<EztraceInput>& eztrace,
                           const std::filesystem::path& kernel_anchor,
                           const std::filesystem::path& out_dir,
                           const std::vector<std::filesystem::path>& own_dirs,
                           const std::vector<Sidecar>& images) {
  Merger m(eztrace, images, kernel_anchor, out_dir, own_dirs);
  m.run(out_dir);
  return std::move(m.report);
}

std::vector<EztraceInput> load_eztrace_inputs(const std::filesystem::path& sidecar_dir,
                                              std::vector<std::string>& warnings) {
  return load_eztrace_inputs(
      read_sidecars(sidecar_dir),
      [](const Sidecar& s) { return std::vector{s.trace_dir() / "eztrace_log.otf2"}; }, warnings);
}

std::vector<EztraceInput> load_eztrace_inputs(const std::vector<Sidecar>& images,
                                              const ArchiveCandidates& candidates,
                                              std::vector<std::string>& warnings) {
  // EZTrace names the archive after the program only: processes of one program that share a
  // trace directory share it (MPI ranks; others overwrite each other's).
  std::map<std::filesystem::path, std::vector<const Sidecar*>> by_archive;
  for (const auto& s : images) {
    if (!s.exited) continue;  // no trace: the merge reports the process
    std::vector<std::filesystem::path> where = candidates(s);
    auto found = std::find_if(where.begin(), where.end(),
                              [](const auto& p) { return std::filesystem::exists(p); });
    if (found != where.end()) {
      by_archive[std::filesystem::weakly_canonical(*found)].push_back(&s);
    } else if (!s.main_ns || s.finalize_ns) {
      // EZTrace finalized (or an older helper cannot tell) and the archive is not there.
      warnings.push_back(fmt::format("{} [{}]: no EZTrace archive at {}", s.program, s.pid,
                                     where.empty() ? s.trace_dir().string() : where[0].string()));
    }
  }
  std::vector<EztraceInput> out;
  for (const auto& [anchor, procs] : by_archive) {
    const std::filesystem::path* found = &anchor;
    const std::filesystem::path dir = anchor.parent_path();
    auto archive = std::make_shared<const EztraceArchive>(index_eztrace_archive(*found));
    std::vector<OTF2_LocationRef> all;
    for (const auto& [loc, def] : archive->defs.locations) all.push_back(loc);
    for (const auto& [loc, ev] : archive->locations) {
      if (!archive->defs.locations.count(loc)) all.push_back(loc);
    }
    // MPI ranks write one archive, each its own locations (rank * chunk + thread). Processes
    // that are not ranks all start at location 0: a later one replaced the earlier one's
    // archive, and the last to exit owns it.
    std::set<uint64_t> seen;
    bool disjoint = true;
    for (const Sidecar* s : procs) {
      for (const auto& t : s->threads) disjoint = disjoint && seen.insert(t.location).second;
    }
    if (procs.size() == 1 || !disjoint) {
      const Sidecar* owner = *std::max_element(
          procs.begin(), procs.end(),
          [](const Sidecar* a, const Sidecar* b) { return a->exit_ns < b->exit_ns; });
      for (const Sidecar* s : procs) {
        if (s == owner) continue;
        warnings.push_back(fmt::format(
            "{} [{}] and another process of the same program both wrote {}: EZTrace kept only "
            "one archive, the events of {} [{}] are lost",
            owner->program, owner->pid, dir.string(), s->program, s->pid));
      }
      out.push_back({*owner, archive, all});
      continue;
    }
    for (const Sidecar* s : procs) {
      std::vector<OTF2_LocationRef> own;
      for (const auto& t : s->threads) own.push_back(t.location);
      out.push_back({*s, archive, std::move(own)});
    }
    for (OTF2_LocationRef loc : all) {
      if (seen.count(loc)) continue;
      auto ev = archive->locations.find(loc);
      warnings.push_back(fmt::format(
          "{}: EZTrace location {} belongs to no process with alignment data; its {} events are "
          "left out",
          found->string(), loc, ev == archive->locations.end() ? 0 : ev->second.events));
    }
  }
  std::sort(out.begin(), out.end(), [](const EztraceInput& a, const EztraceInput& b) {
    return a.process.ctor_ns < b.process.ctor_ns;
  });
  return out;
}

}  // namespace ezio::converters
