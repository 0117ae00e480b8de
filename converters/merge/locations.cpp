// SPDX-License-Identifier: GPL-2.0-only
#include <fmt/format.h>

#include <algorithm>

#include "common/schema/properties.h"
#include "converters/merge/merger.h"

// The merged archive's locations (docs/merge.md, "The merge", steps 3 and 8): the kernel's, each
// EZTrace thread on the kernel location of its TID (or one of its own), and the ranks of
// EZTrace's communicators.
namespace ezio::converters::merge_stages {

Output::Output(const std::filesystem::path& dir, const Definitions& kernel_defs)
    : kd(kernel_defs), w(dir), comms(w), shared{w, {}, comms, {}, {}, {}}, kmap(kd, shared) {
  std::string host = "localhost";
  if (!kd.nodes.empty()) {
    knode = kd.nodes.begin()->first;
    host = kd.str(kd.nodes.begin()->second.name);
  }
  machine = w.system_tree_node(host, "machine");
  shared.machine = machine;
  for (const auto& [loc, def] : kd.locations) spare_id = std::max(spare_id, loc + 1);
  t_min = kd.global_offset;
  t_max = kd.global_offset + kd.trace_length;
}

otf2::Ref Output::group_of(Ref kgroup) {
  if (auto it = groups.find(kgroup); it != groups.end()) return it->second;
  auto g = kd.location_groups.find(kgroup);
  std::string name = g == kd.location_groups.end() ? "unknown" : kd.str(g->second.name);
  OTF2_LocationGroupType type = OTF2_LOCATION_GROUP_TYPE_PROCESS;
  if (g != kd.location_groups.end()) type = g->second.type;
  otf2::Ref out = w.location_group(name, type, machine);
  for (const auto& p : kd.group_properties) {
    if (p.owner != kgroup) continue;
    if (p.type == OTF2_TYPE_UINT64) w.location_group_property(out, kd.str(p.name), p.value.uint64);
    if (p.type == OTF2_TYPE_STRING) {
      w.location_group_property(out, kd.str(p.name), kd.str(p.value.stringRef));
    }
  }
  return groups[kgroup] = out;
}

void Output::write(DefinitionMapper& map, OTF2_LocationRef loc, const Event& e, uint64_t t) {
  if (!at_hand_ || loc != loc_) {
    writer_ = w.events(loc);
    last_ = &last[loc];
    loc_ = loc;
    at_hand_ = true;
  }
  uint64_t& l = *last_;
  if (t < l) {
    ++clamped;
    t = l;
  }
  l = t;
  t_min = std::min(t_min, t);
  t_max = std::max(t_max, t);
  map.write(writer_, e, t);
}

void Output::finish(OTF2_LocationRef loc) {
  if (loc == loc_) at_hand_ = false;
  w.finish_events(loc);
}

// The kernel's locations, minus dropped ones, keeping their ids (TIDs).
void Merger::define_kernel_locations(Output& out) {
  const Definitions& kd = kernel.defs;
  for (const auto& [loc, def] : kd.locations) {
    if (dropped_locations.count(loc)) continue;
    out.w.location(loc, kd.str(def.name), def.type, out.group_of(def.group));
    out.used_ids.insert(loc);
    for (const auto& p : kd.location_properties) {
      if (p.location == loc && p.type == OTF2_TYPE_UINT64) {
        out.w.location_property(loc, kd.str(p.name), p.value.uint64);
      }
    }
  }
}

// Every user thread's location, checked against its kernel spans (check.cpp). The ranks of the
// communicators are then known, and OTF2 wants them (COMM_LOCATIONS) defined before the groups
// that use them.
std::vector<Process> Merger::map_threads(Output& out) {
  std::vector<Process> processes(inputs.size());
  std::set<const EztraceArchive*> archives;
  for (size_t pi = 0; pi < inputs.size(); ++pi) {
    const EztraceInput& in = inputs[pi];
    if (dropped_pids.count(in.process.pid)) continue;  // EZTrace's own `rm`, traced by EZTrace
    ++report.processes;
    if (archives.insert(in.archive.get()).second) {
      report.unsupported_events += in.archive->unsupported_events;
    }
    // Its kernel process as it was before any thread got a location (nullptr: none).
    auto found = kprocs.find(in.process.pid);
    const KernelProcess* kp = found == kprocs.end() ? nullptr : &found->second;
    for (OTF2_LocationRef eloc : in.locations) {
      if (auto t = map_thread(out, in, eloc, kp, processes[pi].tied)) {
        processes[pi].threads.push_back(*t);
      }
    }
  }
  return processes;
}

// One EZTrace location: the merged location of its thread (nullopt: defined, never used).
std::optional<Thread> Merger::map_thread(Output& out, const EztraceInput& in, OTF2_LocationRef eloc,
                                         const KernelProcess* kp,
                                         std::map<Ref, std::string>& tied) {
  const Sidecar& p = in.process;
  const UserLocation* found = events_of(in, eloc);
  auto th = std::find_if(p.threads.begin(), p.threads.end(),
                         [&](const EztraceThread& t) { return t.location == eloc; });
  if (!found && th == p.threads.end()) return std::nullopt;
  if (th == p.threads.end()) {
    report.warnings.push_back(fmt::format(
        "{} [{}]: EZTrace location {} has no thread in the alignment data; its {} events "
        "are written on a location of their own",
        p.program, p.pid, eloc, found ? found->events : 0));
  }
  uint32_t tid = th == p.threads.end() ? 0 : th->tid;
  Thread t{0, eloc, found != nullptr, false};
  const SpanList* kspans = nullptr;
  if (kp && tid) {
    if (auto kl = kp->threads.find(tid); kl != kp->threads.end()) {
      t.out_loc = kl->second;
      if (KernelLocation* events = kernel_location(kl->second)) {
        t.kernel_events = true;
        kspans = &events->spans;
      }
      merged_kernel.insert(kl->second);
    }
  }
  if (!out.used_ids.count(t.out_loc) || !t.out_loc) t.out_loc = define_thread(out, p, kp, tid);
  if (th != p.threads.end()) {
    out.w.location_property(t.out_loc, schema::kEztraceThreadRank, static_cast<uint64_t>(th->rank));
  }
  user_locations[{&in.archive->defs, eloc}] = t.out_loc;
  check_thread(in, eloc, t.user_events, kspans, tid, tied);
  return t;
}

// A location for a thread the kernel archive lacks, in its process's group.
OTF2_LocationRef Merger::define_thread(Output& out, const Sidecar& p, const KernelProcess* kp,
                                       uint32_t tid) {
  const Definitions& kd = kernel.defs;
  OTF2_LocationRef id =
      tid && !kd.locations.count(tid) && !out.used_ids.count(tid) ? tid : out.spare_id++;
  otf2::Ref g;
  if (kp) {
    g = out.group_of(kp->group);
  } else {
    g = out.w.location_group(fmt::format("{} [{}]", p.program, p.pid),
                             OTF2_LOCATION_GROUP_TYPE_PROCESS, out.machine);
    out.w.location_group_property(g, schema::kPid, p.pid);
    out.w.location_group_property(g, schema::kPpid, p.ppid);
    kprocs[p.pid].group = OTF2_UNDEFINED_LOCATION_GROUP;
  }
  out.w.location(id, fmt::format("{} [{}]", p.program, tid ? tid : id),
                 OTF2_LOCATION_TYPE_CPU_THREAD, g);
  if (tid) out.w.location_property(id, schema::kTid, tid);
  out.used_ids.insert(id);
  return id;
}

// Ranks of EZTrace's communicators: the merged locations of their threads. A rank whose process
// left no alignment data still needs a location for the ranks to stay in place.
void Merger::define_comm_ranks(Output& out) {
  out.comms.define_locations([&](const Definitions& defs, uint64_t eloc) {
    if (auto it = user_locations.find({&defs, eloc}); it != user_locations.end()) {
      return it->second;
    }
    OTF2_LocationRef id = out.spare_id++;
    otf2::Ref g = out.w.location_group(stand_in_group_name(eloc), OTF2_LOCATION_GROUP_TYPE_PROCESS,
                                       out.machine);
    out.w.location(id, fmt::format("EZTrace location {}", eloc), OTF2_LOCATION_TYPE_CPU_THREAD, g);
    user_locations[{&defs, eloc}] = id;
    return id;
  });
}

}  // namespace ezio::converters::merge_stages
