// SPDX-License-Identifier: GPL-2.0-only
#include "converters/hosts/host_output.h"

#include <algorithm>
#include <map>
#include <string>

#include "common/schema/properties.h"

namespace ezio::converters {
namespace {

using otf2::Definitions;
using otf2::Ref;

// The host's counts of a device (HostNode::count_devices), once per host and device, on the
// first of its parts' locations; true when `p` is such a count.
bool device_count(Output& out, const Definitions& d, HostNode& host,
                  const otf2::LocationProperty& p, uint64_t shift) {
  static const std::map<std::string, size_t> counts = {{schema::kUnattributedRequests, 0},
                                                       {schema::kUnattributedBytes, 1},
                                                       {schema::kNotIssuedRequests, 2}};
  const std::string& location = d.str(d.locations.at(p.location).name);
  auto c = counts.find(d.str(p.name));
  if (c == counts.end() || !is_device_name(location)) return false;
  auto host_counts = host.device_counts.find(location);
  if (host_counts == host.device_counts.end()) return false;
  if (host.device_counts_written.insert(location + "\n" + c->first).second) {
    out.w.location_property(p.location + shift, c->first, host_counts->second[c->second]);
  }
  return true;
}

// The part's location groups and locations, under its host's node; a device's group is the host's
// one for all its parts.
void define_locations(Output& out, const Definitions& d, HostNode& host, uint64_t shift,
                      const std::set<OTF2_LocationRef>& dropped) {
  std::map<Ref, Ref> groups;
  std::set<Ref> kept;  // groups of a location not dropped: a dropped stand-in's group goes too
  for (const auto& [id, l] : d.locations) {
    if (!dropped.count(id)) kept.insert(l.group);
  }
  for (const auto& [id, g] : d.location_groups) {
    const std::string& name = d.str(g.name);
    if (!kept.count(id)) continue;
    if (is_device_name(name)) {
      if (auto had = host.device_groups.find(name); had != host.device_groups.end()) {
        groups[id] = had->second;
        continue;
      }
    }
    Ref og = groups[id] = out.w.location_group(name, g.type, host.node);
    if (is_device_name(name)) host.device_groups[name] = og;
    for (const auto& p : d.group_properties) {
      if (p.owner != id) continue;
      if (p.type == OTF2_TYPE_UINT64)
        out.w.location_group_property(og, d.str(p.name), p.value.uint64);
      if (p.type == OTF2_TYPE_STRING) {
        out.w.location_group_property(og, d.str(p.name), d.str(p.value.stringRef));
      }
    }
  }
  for (const auto& [id, l] : d.locations) {
    if (dropped.count(id)) continue;
    auto g = groups.find(l.group);
    if (g == groups.end()) {
      g = groups
              .emplace(l.group,
                       out.w.location_group("unknown", OTF2_LOCATION_GROUP_TYPE_PROCESS, host.node))
              .first;
    }
    out.w.location(id + shift, d.str(l.name), l.type, g->second);
  }
  for (const auto& p : d.location_properties) {
    if (p.type != OTF2_TYPE_UINT64 || dropped.count(p.location)) continue;
    // The windows' values stay on their sessions' locations.
    if (!device_count(out, d, host, p, shift)) {
      out.w.location_property(p.location + shift, d.str(p.name), p.value.uint64);
    }
  }
}

}  // namespace

void define_part(Output& out, const HostPart& p, const Definitions& d, Ref root, HostNode& host,
                 HostTotals& totals, uint64_t shift, const std::set<OTF2_LocationRef>& dropped) {
  if (!host.defined) {
    host.defined = true;
    host.count_devices();
    host.node = out.w.system_tree_node(p.host, "node", root);
    write_host_properties(out.w, host, totals);
  }
  out.shared.machine = host.node;  // files are scoped to their host
  define_locations(out, d, host, shift, dropped);
  // The part's recording covers its clock range, events or not (as the one-node merge's does).
  if (d.global_offset != 0 || d.trace_length != 0) {
    out.t_min = std::min(out.t_min, reference_time(p, d.global_offset));
    out.t_max = std::max(out.t_max, reference_time(p, d.global_offset + d.trace_length));
  }
  if (out.realtime == OTF2_UNDEFINED_TIMESTAMP && d.realtime != OTF2_UNDEFINED_TIMESTAMP) {
    // The part's realtime is of its own global offset, which maps onto the reference's timeline.
    out.realtime = d.realtime;
    out.realtime_at = reference_time(p, d.global_offset);
  }
}

std::unique_ptr<Definitions> comm_definitions(const Definitions& d) {
  auto c = std::make_unique<Definitions>();
  c->groups = d.groups;
  c->comms = d.comms;
  auto keep = [&](Ref name) {
    if (auto it = d.strings.find(name); it != d.strings.end()) c->strings.insert(*it);
  };
  for (const auto& g : d.groups) keep(g.name);
  for (const auto& k : d.comms) keep(k.name);
  return c;
}

std::set<uint64_t> ranks_elsewhere(const Definitions& d) {
  std::set<uint64_t> elsewhere;
  for (const auto& g : d.groups) {
    if (g.type != OTF2_GROUP_TYPE_COMM_LOCATIONS) continue;
    for (uint64_t m : g.members) {
      auto l = d.locations.find(m);
      if (l == d.locations.end()) {
        elsewhere.insert(m);
        continue;
      }
      auto lg = d.location_groups.find(l->second.group);
      if (l->second.events == 0 && lg != d.location_groups.end() &&
          is_stand_in_group(d.str(lg->second.name))) {
        elsewhere.insert(m);
      }
    }
  }
  return elsewhere;
}

}  // namespace ezio::converters
