#include "converters/merge.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include "common/error.h"
#include "common/otf2/writer.h"
#include "converters/comm_mapper.h"
#include "converters/definition_mapper.h"
#include "converters/kernel_spans.h"

namespace ezio::converters {
namespace {

constexpr size_t kMaxDetails = 20;

bool under(const std::string& path, const std::vector<std::string>& dirs) {
  for (const auto& d : dirs) {
    if (path.size() > d.size() && path.compare(0, d.size(), d) == 0 && path[d.size()] == '/') {
      return true;
    }
  }
  return false;
}

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

// The value of a UINT64 attribute of an event, by attribute ref.
std::optional<uint64_t> attribute_value(const Event& e, Ref attribute) {
  for (const Attribute& a : e.attributes) {
    if (a.id == attribute && a.type == OTF2_TYPE_UINT64) return a.value.uint64;
  }
  return std::nullopt;
}

struct Merger {
  const std::vector<EztraceInput>& inputs;
  const Archive& kernel;
  std::vector<std::string> own_dirs;
  MergeReport report;

  std::map<uint32_t, KernelProcess> kprocs;
  std::map<Ref, std::vector<OTF2_LocationRef>> group_locations;  // all of a process's locations
  std::map<OTF2_LocationRef, std::vector<Span>> spans;
  std::set<OTF2_LocationRef> dropped_locations;
  std::set<std::string> traced_syscalls;  // kernel regions defined: what the recorder watched

  Merger(const std::vector<EztraceInput>& in, const Archive& k,
         const std::vector<std::filesystem::path>& dirs)
      : inputs(in), kernel(k) {
    for (const auto& d : dirs) own_dirs.push_back(d.lexically_normal().string());
    for (const auto& i : inputs) own_dirs.push_back(i.process.trace_dir().string());
  }

  void index_kernel() {
    const Definitions& d = kernel.defs;
    for (const auto& [ref, r] : d.regions) traced_syscalls.insert(d.str(r.canonical));
    for (const auto& [loc, def] : d.locations) {
      group_locations[def.group].push_back(loc);
      auto pid = d.group_property(def.group, "EZIOTRACE::PID");
      auto tid = d.location_property(loc, "EZIOTRACE::TID");
      if (!pid || !tid) continue;  // device and other asynchronous locations
      KernelProcess& p = kprocs[static_cast<uint32_t>(*pid)];
      p.pid = static_cast<uint32_t>(*pid);
      p.ppid = static_cast<uint32_t>(d.group_property(def.group, "EZIOTRACE::PPID").value_or(0));
      p.group = def.group;
      p.threads.emplace(static_cast<uint32_t>(*tid), loc);
    }
    for (const auto& [loc, events] : kernel.events) spans[loc] = cut_spans(d, events);
  }

  // The events of the process's own locations of its archive.
  static const std::vector<Event>* events_of(const EztraceInput& in, OTF2_LocationRef loc) {
    auto it = in.archive->events.find(loc);
    return it == in.archive->events.end() ? nullptr : &it->second;
  }

  static uint64_t first_user_time(const EztraceInput& in) {
    uint64_t t = std::numeric_limits<uint64_t>::max();
    for (OTF2_LocationRef loc : in.locations) {
      if (auto ev = events_of(in, loc); ev && !ev->empty()) t = std::min(t, ev->front().time);
    }
    return t == std::numeric_limits<uint64_t>::max() ? 0 : t + in.process.time_offset();
  }

  // EZTrace's finalization: from its "EZTrace finalize" region on.
  static uint64_t finalize_time(const EztraceInput& in) {
    const Definitions& d = in.archive->defs;
    for (OTF2_LocationRef loc : in.locations) {
      const auto* ev = events_of(in, loc);
      if (!ev) continue;
      for (const Event& e : *ev) {
        if (e.kind != EventKind::Enter) continue;
        auto r = d.regions.find(e.ref);
        if (r != d.regions.end() && d.str(r->second.name) == "EZTrace finalize") {
          return e.time + in.process.time_offset();
        }
      }
    }
    return std::numeric_limits<uint64_t>::max();
  }

  bool touches_files_under(const std::vector<Event>& events, const Span& s,
                           const std::vector<std::string>& dirs) const {
    for (size_t i = s.begin; i < s.end; ++i) {
      const Event& e = events[i];
      if (!is_io_event(e.kind)) continue;
      if (auto path = kernel.defs.handle_path(e.ref); path && under(*path, dirs)) return true;
    }
    return false;
  }

  // Block requests whose call.id is a dropped call are that call's I/O: dropped with it, so that
  // no link points to a call the archive no longer has.
  void filter_caused_requests() {
    const Definitions& d = kernel.defs;
    Ref call_id = OTF2_UNDEFINED_ATTRIBUTE;
    for (const auto& [ref, a] : d.attributes) {
      if (d.str(a.name) == "call.id") call_id = ref;
    }
    if (call_id == OTF2_UNDEFINED_ATTRIBUTE) return;
    std::set<uint64_t> dropped_calls;
    for (const auto& [loc, list] : spans) {
      const auto& events = kernel.events.at(loc);
      for (const Span& s : list) {
        if (!s.dropped || events[s.begin].kind != EventKind::Enter) continue;
        if (auto id = attribute_value(events[s.begin], call_id); id && *id)
          dropped_calls.insert(*id);
      }
    }
    for (auto& [loc, list] : spans) {
      const auto& events = kernel.events.at(loc);
      std::set<std::pair<Ref, uint64_t>> requests;  // (handle, matching id)
      for (const Span& s : list) {
        const Event& e = events[s.begin];
        if (s.dropped || e.kind != EventKind::IoOperationBegin) continue;
        auto id = attribute_value(e, call_id);
        if (id && dropped_calls.count(*id)) requests.insert({e.ref, e.b});
      }
      if (requests.empty()) continue;
      report.own_io_block_requests += requests.size();
      for (Span& s : list) {
        const Event& e = events[s.begin];
        bool request_event =
            e.kind >= EventKind::IoOperationBegin && e.kind <= EventKind::IoOperationCancelled;
        if (request_event && requests.count({e.ref, e.b})) s.dropped = true;
      }
    }
  }

  // Drops EZTrace's own I/O from the kernel side (see docs/merge.md, "EZTrace's own I/O").
  void filter_own_io() {
    std::map<uint32_t, const EztraceInput*> traced;
    for (const auto& in : inputs) traced[in.process.pid] = &in;
    // 1. Calls on files under a trace directory or the sidecar directory, anywhere.
    for (auto& [loc, list] : spans) {
      const auto& events = kernel.events.at(loc);
      for (Span& s : list) s.dropped = touches_files_under(events, s, own_dirs);
    }
    for (const auto& [pid, in] : traced) {
      auto kp = kprocs.find(pid);
      if (kp == kprocs.end()) continue;
      uint64_t init_end = first_user_time(*in);
      uint64_t init_begin = in->process.ctor_before_eztrace ? in->process.ctor_ns : init_end;
      uint64_t fin_begin = finalize_time(*in);
      // EZTrace's finalization ends with its last write into its trace directory; the helper's
      // work runs from its exit_ns to its write into the sidecar directory. What lies between
      // (the rest of MPI_Finalize, the program after it) is the application's.
      const std::vector<std::string> trace_dir = {in->process.trace_dir().string()};
      uint64_t fin_end = fin_begin, helper_begin = in->process.exit_ns, helper_end = helper_begin;
      for (const auto& [tid, loc] : kp->second.threads) {
        const auto& events = kernel.events.at(loc);
        for (const Span& s : spans[loc]) {
          if (!s.dropped) continue;
          if (s.t0 >= fin_begin && touches_files_under(events, s, trace_dir)) {
            fin_end = std::max(fin_end, s.t1);
          }
          if (helper_begin && s.t0 >= helper_begin) helper_end = std::max(helper_end, s.t1);
        }
      }
      // 2. The traced process's calls inside EZTrace's start-up and finalization windows.
      for (const auto& [tid, loc] : kp->second.threads) {
        for (Span& s : spans[loc]) {
          if ((s.t0 >= init_begin && s.t0 < init_end) || (s.t0 >= fin_begin && s.t0 <= fin_end) ||
              (helper_begin && s.t0 >= helper_begin && s.t0 <= helper_end)) {
            s.dropped = true;
          }
        }
      }
      // 3. Untraced children living only inside the start-up window: EZTrace's `rm -rf`.
      for (const auto& [cpid, child] : kprocs) {
        if (child.ppid != pid || traced.count(cpid)) continue;
        bool inside = true;
        for (const auto& [tid, loc] : child.threads) {
          for (const Span& s : spans[loc])
            inside = inside && s.t0 >= init_begin && s.t1 <= init_end;
        }
        if (!inside) continue;
        ++report.own_io_processes;
        // All its locations: threads and their page-cache metric locations.
        for (OTF2_LocationRef loc : group_locations[child.group]) dropped_locations.insert(loc);
      }
    }
    for (auto& [loc, list] : spans) {
      for (Span& s : list) {
        if (dropped_locations.count(loc)) s.dropped = true;
        if (s.dropped && !s.call.empty()) ++report.own_io_calls;  // calls, not metric samples
      }
    }
    filter_caused_requests();
  }

  void violation(std::string text) {
    ++report.violations;
    if (report.violation_details.size() < kMaxDetails) {
      report.violation_details.push_back(std::move(text));
    }
  }

  // One item of a merged thread: a user event or a whole kernel span.
  struct Item {
    bool user;
    size_t index;
  };

  // Interleaves a thread's user events (times already on CLOCK_MONOTONIC) with its kernel spans
  // and checks that every system call lies inside the user call around it.
  std::vector<Item> interleave(const EztraceInput& in, const std::vector<Event>& user,
                               const std::vector<Span>* kspans, uint32_t tid) {
    std::vector<Item> out;
    const uint64_t t0 = in.process.time_offset();
    const Definitions& ud = in.archive->defs;
    struct Open {
      std::string name;
      uint64_t time;
      bool satisfied;
    };
    std::vector<Open> stack;
    size_t i = 0, j = 0;
    const size_t nk = kspans ? kspans->size() : 0;
    auto skip_dropped = [&] {
      while (j < nk && (*kspans)[j].dropped) ++j;
    };
    skip_dropped();
    while (i < user.size() || j < nk) {
      bool take_kernel = false;
      if (j < nk) {
        const Span& s = (*kspans)[j];
        if (i == user.size()) {
          take_kernel = true;
        } else {
          uint64_t ut = user[i].time + t0;
          take_kernel = s.t0 < ut || (s.t0 == ut && !opens_a_call(user[i].kind));
        }
      }
      if (take_kernel) {
        const Span& s = (*kspans)[j];
        if (i < user.size() && s.t1 > user[i].time + t0) {
          violation(fmt::format("tid {}: kernel {} [{}, {}] crosses user {} at {}", tid, s.call,
                                s.t0, s.t1, event_kind_name(user[i].kind), user[i].time + t0));
        }
        for (Open& o : stack) {
          if (auto d = direct_calls().find(o.name); d != direct_calls().end()) {
            if (d->second.count(s.call)) o.satisfied = true;
          }
        }
        out.push_back({false, j});
        ++j;
        skip_dropped();
        continue;
      }
      const Event& e = user[i];
      if (e.kind == EventKind::Enter || e.kind == EventKind::Leave) {
        auto r = ud.regions.find(e.ref);
        std::string name = r == ud.regions.end() ? "" : ud.str(r->second.name);
        if (e.kind == EventKind::Enter) {
          stack.push_back({name, e.time + t0, false});
        } else if (!stack.empty()) {
          Open o = stack.back();
          stack.pop_back();
          auto d = direct_calls().find(o.name);
          bool watched = false;
          if (d != direct_calls().end() && kspans) {
            for (const auto& sc : d->second) watched = watched || traced_syscalls.count(sc);
          }
          if (watched) {
            ++report.checked_calls;
            if (!o.satisfied) {
              violation(fmt::format("tid {}: user call {} [{}, {}] contains no {} system call", tid,
                                    o.name, o.time, e.time + t0, o.name));
            }
          }
        }
      }
      out.push_back({true, i});
      ++i;
    }
    return out;
  }

  void run(const std::filesystem::path& out_dir) {
    index_kernel();
    filter_own_io();

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
    auto write_span = [&](OTF2_LocationRef loc, const std::vector<Event>& events, const Span& s) {
      OTF2_EvtWriter* ew = w.events(loc);
      for (size_t k = s.begin; k < s.end; ++k) {
        kmap.write(ew, events[k], stamp(loc, events[k].time));
        ++report.kernel_events;
      }
    };

    // Threads that EZTrace traced: user events and kernel spans on one location.
    std::set<OTF2_LocationRef> merged_kernel;
    // (input archive, EZTrace location) -> merged location, for the ranks of communicators.
    std::map<std::pair<const Definitions*, uint64_t>, OTF2_LocationRef> user_locations;
    std::set<const Archive*> archives;
    struct Thread {
      OTF2_LocationRef out_loc;
      const std::vector<Event>* user;
      const std::vector<Event>* kevents;
      const std::vector<Span>* kspans;
      std::vector<Item> items;
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
      ++report.processes;
      if (archives.insert(in.archive.get()).second) {
        report.unsupported_events += in.archive->unsupported_events;
      }
      const Sidecar& p = in.process;
      auto kp = kprocs.find(p.pid);
      std::map<Ref, std::string>& tied = processes[pi].tied;
      std::vector<Thread>& threads = processes[pi].threads;
      static const std::vector<Event> no_events;
      for (OTF2_LocationRef eloc : in.locations) {
        const std::vector<Event>* found = events_of(in, eloc);
        const std::vector<Event>& user = found ? *found : no_events;
        auto th = std::find_if(p.threads.begin(), p.threads.end(),
                               [&](const EztraceThread& t) { return t.location == eloc; });
        if (!found && th == p.threads.end()) continue;  // defined, never used
        if (th == p.threads.end()) {
          report.warnings.push_back(fmt::format(
              "{} [{}]: EZTrace location {} has no thread in the alignment data; its {} events "
              "are written on a location of their own",
              p.program, p.pid, eloc, user.size()));
        }
        uint32_t tid = th == p.threads.end() ? 0 : th->tid;
        Thread t{0, &user, nullptr, nullptr, {}};
        if (kp != kprocs.end() && tid) {
          if (auto kl = kp->second.threads.find(tid); kl != kp->second.threads.end()) {
            t.out_loc = kl->second;
            if (auto ev = kernel.events.find(kl->second); ev != kernel.events.end()) {
              t.kevents = &ev->second;
              t.kspans = &spans[kl->second];
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
            w.location_group_property(g, "EZIOTRACE::PID", p.pid);
            w.location_group_property(g, "EZIOTRACE::PPID", p.ppid);
            kprocs[p.pid].group = OTF2_UNDEFINED_LOCATION_GROUP;
          }
          w.location(id, fmt::format("{} [{}]", p.program, tid ? tid : id),
                     OTF2_LOCATION_TYPE_CPU_THREAD, g);
          if (tid) w.location_property(id, "EZIOTRACE::TID", tid);
          used_ids.insert(id);
          t.out_loc = id;
        }
        if (th != p.threads.end()) {
          w.location_property(t.out_loc, "EZIOTRACE::EZTRACE_THREAD_RANK",
                              static_cast<uint64_t>(th->rank));
        }
        user_locations[{&in.archive->defs, eloc}] = t.out_loc;
        t.items = interleave(in, user, t.kspans, tid);
        // Tie: a user IoCreateHandle takes the file of the kernel open inside the same user call.
        std::optional<std::string> kernel_file;
        int depth = 0;
        for (const Item& it : t.items) {
          if (!it.user) {
            const Span& s = (*t.kspans)[it.index];
            for (size_t k = s.begin; k < s.end; ++k) {
              const Event& ke = (*t.kevents)[k];
              if (ke.kind == EventKind::IoCreateHandle) kernel_file = kd.handle_path(ke.ref);
            }
            continue;
          }
          const Event& ue = user[it.index];
          if (ue.kind == EventKind::Enter && depth++ == 0) kernel_file.reset();
          if (ue.kind == EventKind::Leave && depth > 0) --depth;
          if (ue.kind == EventKind::IoCreateHandle && kernel_file) tied[ue.ref] = *kernel_file;
        }
        threads.push_back(std::move(t));
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

    // Pass 2: the events.
    for (size_t pi = 0; pi < inputs.size(); ++pi) {
      const EztraceInput& in = inputs[pi];
      const Sidecar& p = in.process;
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
        w.location_group_property(g, "EZIOTRACE::EZTRACE_FIRST_TIMESTAMP", p.first_timestamp);
        // CLOCK_MONOTONIC - EZTrace time; differs from first_timestamp with EZTrace's MPI clock.
        w.location_group_property(g, "EZIOTRACE::EZTRACE_TIME_OFFSET", p.time_offset());
        w.location_group_property(g, "EZIOTRACE::EZTRACE_CLOCK_ERROR_NS", p.clock_offset_error_ns);
      }
      for (const Thread& t : processes[pi].threads) {
        OTF2_EvtWriter* ew = w.events(t.out_loc);
        for (const Item& it : t.items) {
          if (it.user) {
            const Event& e = (*t.user)[it.index];
            umap.write(ew, e, stamp(t.out_loc, e.time + p.time_offset()));
            ++report.user_events;
          } else {
            write_span(t.out_loc, *t.kevents, (*t.kspans)[it.index]);
          }
        }
      }
    }

    // Everything else of the kernel archive, as it is (minus EZTrace's own I/O).
    for (const auto& [loc, events] : kernel.events) {
      if (merged_kernel.count(loc) || dropped_locations.count(loc)) continue;
      for (const Span& s : spans[loc]) {
        if (!s.dropped) write_span(loc, events, s);
      }
    }
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
    w.system_tree_node_property(machine, "EZIOTRACE::ALIGNMENT_VIOLATIONS", report.violations);
    w.system_tree_node_property(machine, "EZIOTRACE::ALIGNMENT_CHECKED_CALLS",
                                report.checked_calls);
    w.system_tree_node_property(machine, "EZIOTRACE::EZTRACE_PROCESSES", report.processes);
    w.system_tree_node_property(machine, "EZIOTRACE::EZTRACE_OWN_IO_FILTERED", report.own_io_calls);
    w.system_tree_node_property(
        machine, "EZIOTRACE::ALIGNMENT",
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
  for (std::string_view layer : {"syscall", "vfs", "fs", "pagecache", "block"}) {
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

MergeReport merge_archives(const std::vector<EztraceInput>& eztrace, const Archive& kernel,
                           const std::filesystem::path& out_dir,
                           const std::vector<std::filesystem::path>& own_dirs) {
  Merger m(eztrace, kernel, own_dirs);
  m.run(out_dir);
  return std::move(m.report);
}

std::vector<EztraceInput> load_eztrace_inputs(const std::filesystem::path& sidecar_dir,
                                              const std::vector<std::filesystem::path>& search_dirs,
                                              std::vector<std::string>& warnings) {
  std::vector<Sidecar> sidecars = read_sidecars(sidecar_dir);
  // EZTrace names the archive after the program only: the processes of one program share it.
  std::map<std::filesystem::path, std::vector<const Sidecar*>> by_dir;
  for (const auto& s : sidecars) by_dir[s.trace_dir()].push_back(&s);
  std::vector<EztraceInput> out;
  for (const auto& [dir, procs] : by_dir) {
    const Sidecar& first = *procs.front();
    std::vector<std::filesystem::path> candidates = {dir / "eztrace_log.otf2"};
    for (const auto& d : search_dirs) {
      candidates.push_back(d / (first.program + "_trace") / "eztrace_log.otf2");
    }
    auto found = std::find_if(candidates.begin(), candidates.end(),
                              [](const auto& p) { return std::filesystem::exists(p); });
    if (found == candidates.end()) {
      for (const Sidecar* s : procs) {
        warnings.push_back(fmt::format("{} [{}]: no EZTrace archive at {}", s->program, s->pid,
                                       candidates.front().string()));
      }
      continue;
    }
    auto archive = std::make_shared<const Archive>(read_archive(*found));
    std::vector<OTF2_LocationRef> all;
    for (const auto& [loc, def] : archive->defs.locations) all.push_back(loc);
    for (const auto& [loc, ev] : archive->events) {
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
      auto ev = archive->events.find(loc);
      warnings.push_back(fmt::format(
          "{}: EZTrace location {} belongs to no process with alignment data; its {} events are "
          "left out",
          found->string(), loc, ev == archive->events.end() ? 0 : ev->second.size()));
    }
  }
  std::sort(out.begin(), out.end(), [](const EztraceInput& a, const EztraceInput& b) {
    return a.process.ctor_ns < b.process.ctor_ns;
  });
  return out;
}

}  // namespace ezio::converters
