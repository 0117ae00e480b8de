// SPDX-License-Identifier: GPL-2.0-only
#include "analysis/model/definitions.h"

#include <fmt/format.h>

#include <string_view>

#include "common/schema/properties.h"

namespace ezio::analysis {

const RegionDef* Definitions::region(Ref id) const {
  auto it = regions.find(id);
  return it == regions.end() ? nullptr : &it->second;
}

const LocationDef* Definitions::location(OTF2_LocationRef id) const {
  auto it = locations.find(id);
  return it == locations.end() ? nullptr : &it->second;
}

std::string Definitions::handle_path(Ref handle) const {
  auto h = io_handles.find(handle);
  if (h == io_handles.end()) return fmt::format("<handle {}>", handle);
  if (auto f = io_files.find(h->second.file); f != io_files.end() && !f->second.empty()) {
    return f->second;
  }
  std::string_view name = h->second.name;
  if (auto pos = name.rfind(" [pid "); pos != std::string_view::npos && name.ends_with("]")) {
    name = name.substr(0, pos);
  }
  if (name.empty()) return fmt::format("<handle {}>", handle);
  return std::string(name);
}

bool Definitions::is_device(OTF2_LocationRef loc) const {
  const LocationDef* def = location(loc);
  return def && def->name.starts_with("block ");
}

std::string Definitions::process_of(OTF2_LocationRef loc) const {
  auto l = locations.find(loc);
  if (l == locations.end()) return {};
  auto g = location_groups.find(l->second.group);
  return g == location_groups.end() ? std::string() : g->second;
}

std::string Definitions::host_of(OTF2_LocationRef loc) const {
  auto l = locations.find(loc);
  if (l == locations.end()) return {};
  auto h = group_hosts.find(l->second.group);
  return h == group_hosts.end() ? std::string() : h->second;
}

namespace {

void host_property(const otf2::Definitions& a, const otf2::NodeDef& node, const std::string& name,
                   const otf2::Property& p, Definitions& d) {
  std::string& value = d.host_properties[a.str(node.name)][name];
  if (p.type == OTF2_TYPE_STRING) {
    value = a.str(p.value.stringRef);
  } else if (p.type == OTF2_TYPE_DOUBLE) {
    value = fmt::format("{}", p.value.float64);
  } else if (p.type == OTF2_TYPE_UINT64) {
    value = std::to_string(p.value.uint64);
  } else if (auto v = otf2::integer_value(p.type, p.value)) {
    value = std::to_string(*v);
  }
}

}  // namespace

Definitions resolve(const otf2::Definitions& a) {
  Definitions d;
  d.resolution = a.resolution == 0 ? 1 : a.resolution;  // a zero resolution would divide by zero
  d.global_offset = a.global_offset;
  d.trace_length = a.trace_length;
  if (a.realtime != OTF2_UNDEFINED_TIMESTAMP) d.realtime = a.realtime;
  if (!a.nodes.empty()) d.host = a.str(a.nodes.begin()->second.name);
  for (const auto& [id, r] : a.regions) {
    RegionDef& reg = d.regions[id];
    reg.name = a.str(r.name);
    reg.canonical = a.str(r.canonical);
    if (reg.canonical.empty()) reg.canonical = reg.name;
    if (reg.name.empty()) reg.name = reg.canonical;
    if (reg.name.empty()) reg.name = reg.canonical = fmt::format("<region {}>", id);
    reg.role = r.role;
  }
  for (const auto& [id, g] : a.location_groups) {
    d.location_groups[id] = a.str(g.name);
    if (auto n = a.nodes.find(g.node); n != a.nodes.end())
      d.group_hosts[id] = a.str(n->second.name);
  }
  for (const auto& [id, l] : a.locations) d.locations[id] = {a.str(l.name), l.group};
  for (const auto& [id, f] : a.io_files) d.io_files[id] = a.str(f.name);
  for (const auto& [id, p] : a.io_paradigms) d.io_paradigms[id] = a.str(p.identification);
  for (const auto& [id, h] : a.io_handles) d.io_handles[id] = {a.str(h.name), h.file};
  for (const auto& [id, attr] : a.attributes) d.attributes[id] = a.str(attr.name);
  for (const auto& [id, m] : a.metric_members) d.metric_members[id] = a.str(m.name);
  for (const auto& [id, c] : a.metric_classes) d.metric_classes[id] = c.members;
  for (const auto& p : a.node_properties) {
    // An archive of several hosts (merge-hosts) holds each host's own under its node and the
    // job's totals on the root: the analyzers read the root's.
    auto node = a.nodes.find(p.owner);
    const std::string& name = a.str(p.name);
    if (node != a.nodes.end() && node->second.parent != OTF2_UNDEFINED_SYSTEM_TREE_NODE) {
      host_property(a, node->second, name, p, d);
      continue;
    }
    if (p.type == OTF2_TYPE_STRING) {
      d.node_string_properties[name] = a.str(p.value.stringRef);
    } else if (auto v = otf2::integer_value(p.type, p.value)) {
      d.node_uint_properties[name] = static_cast<uint64_t>(*v);
    }
  }
  for (const auto& p : a.group_properties) {
    auto v = otf2::integer_value(p.type, p.value);
    if (!v) continue;
    if (a.str(p.name) == schema::kPid) d.group_pids[p.owner] = static_cast<uint64_t>(*v);
    if (a.str(p.name) == schema::kPpid) d.group_ppids[p.owner] = static_cast<uint64_t>(*v);
  }
  for (const auto& p : a.location_properties) {
    auto v = otf2::integer_value(p.type, p.value);
    if (v && a.str(p.name) == schema::kTid) {
      d.location_tids[p.location] = static_cast<uint64_t>(*v);
    }
  }
  return d;
}

}  // namespace ezio::analysis
