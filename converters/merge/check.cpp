// SPDX-License-Identifier: GPL-2.0-only
#include <fmt/format.h>

#include <map>
#include <optional>
#include <set>
#include <string>

#include "common/error.h"
#include "common/schema/layers.h"
#include "common/schema/properties.h"
#include "converters/merge/merger.h"

// Each EZTrace thread against its kernel spans, in merged order, before anything is written
// (docs/merge.md, "The merge", steps 5 and 6): the alignment self-check, and the user handle ->
// kernel file tie the definitions need.
namespace ezio::converters::merge_stages {
namespace {

constexpr size_t kMaxDetails = 20;

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

// What the check needs of a user region, found once per region (not per event).
struct RegionCheck {
  std::string name;
  const std::set<std::string>* syscalls = nullptr;  // it must contain one of these
  bool watched = false;                             // the kernel archive defines one of them
  // Its place in the user-level stack (schema::kUserLayers: HDF5, MPI-IO, POSIX) when it is one
  // of the stack's calls: an HDF5 or MPI-IO function, or a POSIX call that reaches the kernel.
  std::optional<size_t> stack_layer;
};
// A user call open on a thread's stack while its system calls go by.
struct OpenCall {
  const RegionCheck* check;
  uint64_t time;
  bool satisfied;
  bool destroys_handle = false;  // a user IoDestroyHandle inside it
};

// The user call closed by a LEAVE at time `end`: checked for the system call it must contain.
void check_call(Merger& m, const OpenCall& o, uint64_t end, uint32_t tid) {
  const std::string& name = o.check->name;
  bool watched = o.check->watched;
  if (watched && name == "close" && !o.satisfied && !o.destroys_handle) {
    // EZTrace 2.0's close() wrapper calls the real close only for an fd it saw opened
    // (strace: close(0), close(1), close(77) make no system call under it; the fd stays
    // open). Such a call is EZTrace's doing, not a misalignment.
    ++m.report.closes_without_syscall;
    watched = false;
  }
  if (watched) {
    ++m.report.checked_calls;
    if (!o.satisfied && m.report.syscalls_lost > 0) {
      ++m.report.unverifiable_calls;
    } else if (!o.satisfied) {
      m.violation(fmt::format("tid {}: user call {} [{}, {}] contains no {} system call", tid, name,
                              o.time, end, name));
    }
  }
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
        m_.violation(fmt::format("tid {}: kernel {} [{}, {}] crosses user {} at {}", tid_, *s.call,
                                 s.t0, s.t1, event_kind_name(u->kind), u->time + t0_));
      }
      for (OpenCall& o : stack_) {
        if (o.check->syscalls && o.check->syscalls->count(*s.call)) o.satisfied = true;
      }
      if (s.created != kNoHandle) kernel_file_ = m_.kernel.defs.handle_path(s.created);
    }
  }

  // An upper layer's call inside a lower one's (MPI_File_write inside pwrite, H5Dwrite inside
  // MPI_File_write_all) is not how the stack nests: EZTrace's events or the modules are wrong.
  void check_layers(const RegionCheck& inner, uint64_t time) {
    if (!inner.stack_layer) return;
    for (const OpenCall& o : stack_) {
      if (!o.check->stack_layer || *o.check->stack_layer <= *inner.stack_layer) continue;
      m_.violation(fmt::format("tid {}: {} call {} at {} inside {} call {}", tid_,
                               schema::kUserLayers[*inner.stack_layer].title, inner.name, time,
                               schema::kUserLayers[*o.check->stack_layer].title, o.check->name));
      return;
    }
  }

  void user(const Event& e) {
    if (e.kind == EventKind::Enter) {
      if (stack_.empty()) kernel_file_.reset();
      check_layers(check_of(e.ref), e.time + t0_);
      stack_.push_back({&check_of(e.ref), e.time + t0_, false});
    } else if (e.kind == EventKind::Leave && !stack_.empty()) {
      check_call(m_, stack_.back(), e.time + t0_, tid_);
      stack_.pop_back();
    }
    if (e.kind == EventKind::IoDestroyHandle && !stack_.empty())
      stack_.back().destroys_handle = true;
    if (e.kind == EventKind::IoCreateHandle && kernel_file_ && !defined_upper_layer(e.ref))
      tied_[e.ref] = *kernel_file_;
  }

  // A handle of an upper layer (MPI-IO, HDF5) whose module defined it: its file is right on
  // every rank (those modules give each rank its own refs), and the last file the kernel opened
  // in its call need not be it (OMPIO's MPI_File_open opens a semaphore after the file).
  bool defined_upper_layer(Ref handle) const {
    auto h = ud_.io_handles.find(handle);
    if (h == ud_.io_handles.end() || !ud_.io_files.count(h->second.file)) return false;
    auto p = ud_.io_paradigms.find(h->second.paradigm);
    if (p == ud_.io_paradigms.end()) return false;
    std::string id = ud_.str(p->second.identification);
    for (const auto& layer : schema::kUserLayers) {
      if (!layer.paradigm.empty() && layer.paradigm == id) return true;
    }
    return false;
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
    size_t layer = schema::user_layer_of_region(c.name);
    if (layer + 1 < schema::kUserLayers.size() || c.syscalls) c.stack_layer = layer;
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

}  // namespace

// A user call without its system call is a misalignment only when the kernel lost none: the
// losses are totals, not placed in time, so with any the call may have been among them.
void Merger::count_lost_syscalls() {
  report.syscalls_lost =
      kernel.defs.node_property(schema::lost_property(schema::kKernelLayers[0])).value_or(0);
}

void Merger::violation(std::string text) {
  ++report.violations;
  if (report.violation_details.size() < kMaxDetails) {
    report.violation_details.push_back(std::move(text));
  }
}

void Merger::check_thread(const EztraceInput& in, OTF2_LocationRef eloc, bool user_events,
                          const SpanList* kspans, uint32_t tid, std::map<Ref, std::string>& tied) {
  ThreadChecker checker(*this, in, kspans, tid, tied);
  if (user_events) {
    EventStore::Cursor events(*in.archive->events, eloc);
    while (const Event* e = events.next()) checker.event(eloc, *e);
  }
  checker.finish();
}

}  // namespace ezio::converters::merge_stages
