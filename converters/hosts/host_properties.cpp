// SPDX-License-Identifier: GPL-2.0-only
#include "converters/hosts/host_properties.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "common/schema/properties.h"
#include "common/version.h"
#include "converters/hosts/merge_hosts.h"

namespace ezio::converters {
namespace {

void int_property(otf2::ArchiveWriter& w, otf2::Ref node, std::string_view name, int64_t v) {
  OTF2_AttributeValue value;
  value.int64 = v;
  w.system_tree_node_property(node, name, OTF2_TYPE_INT64, value);
}

void clock_properties(otf2::ArchiveWriter& w, otf2::Ref node, const HostPart& p, int64_t error_ns) {
  w.system_tree_node_property(node, schema::kClockReference, std::string_view(p.reference));
  const recorder::ClockMap map = p.clock.value_or(recorder::ClockMap{});
  int_property(w, node, schema::kClockOffsetStartNs, map.start.offset_ns);
  int_property(w, node, schema::kClockOffsetEndNs, map.end.offset_ns);
  OTF2_AttributeValue drift;
  drift.float64 = map.drift_ppm();
  w.system_tree_node_property(node, schema::kClockDriftPpm, OTF2_TYPE_DOUBLE, drift);
  w.system_tree_node_property(node, schema::kClockErrorNs, uint64_t(error_ns));
  if (!p.end_missing.empty()) {
    w.system_tree_node_property(node, schema::kClockEndMissing, std::string_view(p.end_missing));
  }
}

}  // namespace

std::string incomplete_recording(const otf2::Definitions& d) {
  std::string status, reason;
  for (const auto& prop : d.node_properties) {
    if (prop.type != OTF2_TYPE_STRING) continue;
    const std::string& name = d.str(prop.name);
    if (name == schema::kStatus) status = d.str(prop.value.stringRef);
    if (name == schema::kStatusReason) reason = d.str(prop.value.stringRef);
  }
  if (status.empty() || status == "complete" || status == "application-crashed" ||
      status == "snapshot")
    return "";
  return fmt::format("merged, its recording {}{}", status,
                     reason.empty() ? "" : " (" + reason + ")");
}

namespace {

// A device's location is named "block <dev>" (recorder/archive/block_archive.cpp).
constexpr std::string_view kDeviceLocationPrefix = "block ";

std::string device_of(const std::string& location) {
  return location.substr(kDeviceLocationPrefix.size());
}

// Whether some part read the device's table at its start and end: the windows, not the largest
// part, then say what the host counted.
bool has_window(const std::vector<DeviceWindow>& windows) {
  return std::any_of(windows.begin(), windows.end(),
                     [](const DeviceWindow& w) { return w.table != 0; });
}

}  // namespace

bool is_device_name(const std::string& name) { return name.starts_with(kDeviceLocationPrefix); }

void HostNode::add(const HostPart& p, const otf2::Definitions& d) {
  if (parts++ == 0) first = p;
  clock_error_ns = std::max(clock_error_ns, p.clock ? p.clock->error_ns() : int64_t(0));
  for (const auto& prop : d.node_properties) {
    const std::string& name = d.str(prop.name);
    auto had = std::find_if(properties.begin(), properties.end(),
                            [&](const Value& v) { return v.name == name; });
    if (had == properties.end()) {
      properties.push_back({name, prop.type, prop.value,
                            prop.type == OTF2_TYPE_STRING ? d.str(prop.value.stringRef) : ""});
    } else if (prop.type == OTF2_TYPE_UINT64 && had->type == OTF2_TYPE_UINT64) {
      if (name.starts_with(schema::kLostPrefix)) had->value.uint64 += prop.value.uint64;
      if (name.starts_with(schema::kUnattributedPrefix) ||
          name.starts_with(schema::kNotIssuedPrefix))
        had->value.uint64 = std::max(had->value.uint64, prop.value.uint64);
    }
  }
  for (const auto& [id, loc] : d.locations) {
    const std::string& name = d.str(loc.name);
    if (is_device_name(name)) device_windows[name].push_back(device_window(d, id, p.given));
  }
}

void HostNode::count_devices() {
  for (const auto& [name, windows] : device_windows) {
    std::string rule;
    device_counts[name] = host_device_counts(windows, rule);
    spdlog::debug("{}: {}: unattributed and not-issued requests: {}", first.host, name, rule);
    if (!has_window(windows)) continue;
    DeviceCounts gaps = host_device_gaps(windows);
    // The disk's own count when every window has it (the table's misses a gap in which no
    // session kept the programs attached); the bytes stay the table's, all that is known of them.
    if (auto own = host_device_requests_between(windows)) gaps = {*own, gaps[1], 0};
    device_gaps[name] = gaps;
    if (gaps[0] + gaps[2] > 0) {
      spdlog::warn(
          "{}: {}: {} block requests ({} bytes) between its sessions' windows, outside "
          "every recording (EZIOTRACE::OUTSIDE_WINDOWS::{})",
          first.host, name, gaps[0] + gaps[2], gaps[1], device_of(name));
    }
  }
}

namespace {

// The host's count for a node property EZIOTRACE::UNATTRIBUTED::<dev> or NOT_ISSUED::<dev>, from
// its device's location "block <dev>" when a part has a window of it; else the largest part's
// (add()), as before the windows were written.
uint64_t device_node_count(const HostNode& host, const std::string& name, uint64_t largest) {
  for (auto [prefix, i] : {std::pair<std::string_view, size_t>{schema::kUnattributedPrefix, 0},
                           {schema::kNotIssuedPrefix, 2}}) {
    if (!name.starts_with(prefix)) continue;
    const std::string location = std::string(kDeviceLocationPrefix) + name.substr(prefix.size());
    auto windows = host.device_windows.find(location);
    if (windows == host.device_windows.end() || !has_window(windows->second)) return largest;
    return host.device_counts.at(location)[i];
  }
  return largest;
}

}  // namespace

void write_host_properties(otf2::ArchiveWriter& w, const HostNode& host, HostTotals& totals) {
  for (const auto& prop : host.properties) {
    OTF2_AttributeValue v = prop.value;
    if (prop.type == OTF2_TYPE_STRING) {
      if (prop.name == schema::kKernelRelease) totals.kernels.insert(prop.text);
      if (prop.name == schema::kStatus && prop.text != "complete" && totals.status.empty()) {
        totals.status = fmt::format("{}: {}", host.first.host, prop.text);
      }
      v.stringRef = w.string(prop.text);
    } else if (prop.type == OTF2_TYPE_UINT64 && prop.name.starts_with(schema::kLostPrefix)) {
      totals.lost[prop.name] += v.uint64;
    } else if (prop.type == OTF2_TYPE_UINT64) {
      v.uint64 = device_node_count(host, prop.name, v.uint64);
    }
    w.system_tree_node_property(host.node, prop.name, prop.type, v);
  }
  for (const auto& [location, gaps] : host.device_gaps) {
    const std::string dev = device_of(location);
    w.system_tree_node_property(host.node, schema::outside_windows_property(dev),
                                gaps[0] + gaps[2]);
    w.system_tree_node_property(host.node, schema::outside_windows_bytes_property(dev), gaps[1]);
  }
  clock_properties(w, host.node, host.first, host.clock_error_ns);
}

void write_root_properties(otf2::ArchiveWriter& w, otf2::Ref root, const HostsReport& report,
                           const HostTotals& totals) {
  w.system_tree_node_property(root, schema::kVersion, std::string_view(version_string()));
  w.system_tree_node_property(root, schema::kHosts, report.hosts);
  const auto missing = std::count_if(report.parts.begin(), report.parts.end(),
                                     [](const HostPart& p) { return !p.problem.empty(); });
  w.system_tree_node_property(root, schema::kHostsMissing, uint64_t(missing));
  w.system_tree_node_property(root, schema::kHostsStatus, std::string_view(report.status));
  for (const auto& [name, n] : totals.lost) w.system_tree_node_property(root, name, n);
  std::string kernel = totals.kernels.size() == 1 ? *totals.kernels.begin() : "";
  for (const auto& k : totals.kernels) {
    if (totals.kernels.size() > 1) kernel += fmt::format("{}{}", kernel.empty() ? "" : ", ", k);
  }
  if (!kernel.empty()) {
    w.system_tree_node_property(root, schema::kKernelRelease, std::string_view(kernel));
  }
  std::string status = totals.status.empty() ? "complete" : totals.status;
  if (!report.interrupted.empty()) status = "interrupted";
  w.system_tree_node_property(root, schema::kStatus, std::string_view(status));
  if (!report.interrupted.empty()) {
    w.system_tree_node_property(root, schema::kStatusReason, std::string_view(report.interrupted));
  }
}

}  // namespace ezio::converters
