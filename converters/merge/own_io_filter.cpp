// SPDX-License-Identifier: GPL-2.0-only
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "common/schema/properties.h"
#include "converters/merge/merger.h"

// EZTrace's own I/O dropped from the kernel side (docs/merge.md, "The merge", step 4), and the
// processes with kernel calls but no EZTrace trace found.
namespace ezio::converters::merge_stages {
namespace {

uint64_t first_user_time(const EztraceInput& in) {
  uint64_t t = std::numeric_limits<uint64_t>::max();
  for (OTF2_LocationRef loc : in.locations) {
    if (auto ev = events_of(in, loc); ev && ev->events) t = std::min(t, ev->first_time);
  }
  return t == std::numeric_limits<uint64_t>::max() ? 0 : t + in.process.time_offset();
}

// EZTrace's finalization: from its "EZTrace finalize" region on (kNever: none).
uint64_t finalize_time(const EztraceInput& in) {
  for (OTF2_LocationRef loc : in.locations) {
    const auto* ev = events_of(in, loc);
    if (ev && ev->finalizes) return ev->finalize_time + in.process.time_offset();
  }
  return std::numeric_limits<uint64_t>::max();
}

// True when the span touches a file under dir (only spans under the own directories can).
bool touches_files_under(const KernelLocation& kl, size_t span, const std::string& dir) {
  auto files = kl.own_files.find(span);
  if (files == kl.own_files.end()) return false;
  const std::vector<std::string> dirs = {dir};
  for (const std::string* f : files->second) {
    if (path_under(*f, dirs)) return true;
  }
  return false;
}

ImageWindows windows_of(const Sidecar& image, const EztraceInput* in) {
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

}  // namespace

void Merger::index_kernel() {
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

// Block requests whose call.id is a dropped call are that call's I/O: dropped with it, so that
// no link points to a call the archive no longer has.
void Merger::filter_caused_requests() {
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

// Drops the calls of a process inside its images' windows of EZTrace's (and the helper's) work.
void Merger::drop_image_windows(const KernelProcess& kp, const ImageWindows& w) {
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
      if ((s.t0 >= w.init_begin && s.t0 < w.init_end) || (s.t0 >= w.fin_begin && s.t0 <= fin_end) ||
          (w.helper_begin && s.t0 >= w.helper_begin && s.t0 <= helper_end)) {
        s.dropped = true;
      }
    }
  }
}

// True when every call of the process lies inside [begin, end).
bool Merger::lives_inside(const KernelProcess& p, uint64_t begin, uint64_t end) {
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
void Merger::drop_startup_children(const std::vector<std::pair<uint32_t, ImageWindows>>& windows) {
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
void Merger::filter_own_io() {
  std::map<std::pair<uint32_t, uint64_t>, const EztraceInput*> traced;
  for (const auto& in : inputs) traced[{in.process.pid, in.process.ctor_ns}] = &in;
  std::map<std::pair<uint32_t, uint64_t>, const Sidecar*> all;
  for (const auto& in : inputs) all[{in.process.pid, in.process.ctor_ns}] = &in.process;
  for (const auto& u : unreadable)
    all.emplace(std::pair{u.process.pid, u.process.ctor_ns}, &u.process);
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
    windows.emplace_back(image->pid, windows_of(*image, in == traced.end() ? nullptr : in->second));
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
// not loaded, it wrote nothing, or its trace cannot be read): said in the report and the archive,
// never left silent. A process whose trace cannot be read is named even without calls.
void Merger::find_untraced() {
  std::set<uint32_t> traced;
  for (const auto& in : inputs) traced.insert(in.process.pid);
  std::map<uint32_t, const Sidecar*> started;  // an image of the pid loaded EZTrace
  for (const auto& image : images) started[image.pid] = &image;
  std::map<uint32_t, const UnreadableTrace*> broken;
  for (const auto& u : unreadable) broken[u.process.pid] = &u;
  report.unreadable_traces = unreadable.size();
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
    auto b = broken.find(pid);
    if (!calls && b == broken.end()) continue;
    auto g = kernel.defs.location_groups.find(p.group);
    std::string name = g == kernel.defs.location_groups.end() ? fmt::format("[{}]", pid)
                                                              : kernel.defs.str(g->second.name);
    report.untraced_pids.push_back(pid);
    if (b != broken.end()) {
      report.untraced.push_back(
          fmt::format("{}: EZTrace's trace cannot be read ({})", name, b->second->reason));
    } else if (started.count(pid)) {
      report.untraced.push_back(
          fmt::format("{}: EZTrace started in it but wrote no trace (it exec'd another program "
                      "or ended without exit handlers)",
                      name));
    } else {
      report.untraced.push_back(fmt::format(
          "{}: not traced by EZTrace (forked without exec, or EZTrace not loaded)", name));
    }
  }
  for (const auto& [pid, u] : broken) {
    if (kprocs.count(pid) || traced.count(pid)) continue;  // the kernel never saw it
    report.untraced_pids.push_back(pid);
    report.untraced.push_back(fmt::format("{} [{}]: EZTrace's trace cannot be read ({})",
                                          u->process.program, pid, u->reason));
  }
}

}  // namespace ezio::converters::merge_stages
