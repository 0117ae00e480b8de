// SPDX-License-Identifier: GPL-2.0-only
#include "converters/hosts/device_windows.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "common/schema/properties.h"

namespace ezio::converters {

DeviceWindow device_window(const otf2::Definitions& d, OTF2_LocationRef location,
                           std::string part) {
  DeviceWindow w;
  w.part = std::move(part);
  const std::map<std::string, uint64_t*> fields = {
      {schema::kUnattributedRequests, &w.counts[0]},
      {schema::kUnattributedBytes, &w.counts[1]},
      {schema::kNotIssuedRequests, &w.counts[2]},
      {schema::kUnattributedTable, &w.table},
      {schema::kUnattributedRequestsAtStart, &w.start[0]},
      {schema::kUnattributedRequestsAtEnd, &w.end[0]},
      {schema::kUnattributedBytesAtStart, &w.start[1]},
      {schema::kUnattributedBytesAtEnd, &w.end[1]},
      {schema::kNotIssuedRequestsAtStart, &w.start[2]},
      {schema::kNotIssuedRequestsAtEnd, &w.end[2]},
      {schema::kDeviceRequestsAtStart, &w.device_start},
      {schema::kDeviceRequestsAtEnd, &w.device_end},
  };
  for (const auto& p : d.location_properties) {
    if (p.location != location || p.type != OTF2_TYPE_UINT64) continue;
    if (auto f = fields.find(d.str(p.name)); f != fields.end()) *f->second = p.value.uint64;
  }
  return w;
}

uint64_t union_length(std::vector<std::pair<uint64_t, uint64_t>> ranges) {
  std::sort(ranges.begin(), ranges.end());
  uint64_t total = 0, covered = 0;  // covered: the union's end so far
  bool any = false;
  for (const auto& [first, second] : ranges) {
    if (second <= first) continue;
    const uint64_t from = any ? std::max(first, covered) : first;
    if (second > from) total += second - from;
    covered = any ? std::max(covered, second) : second;
    any = true;
  }
  return total;
}

DeviceCounts host_device_counts(const std::vector<DeviceWindow>& parts, std::string& rule) {
  std::map<uint64_t, std::vector<const DeviceWindow*>> tables;
  DeviceCounts best{};
  std::vector<std::string> without;
  auto keep_largest = [&best](const DeviceCounts& c) {
    for (size_t i = 0; i < best.size(); ++i) best[i] = std::max(best[i], c[i]);
  };
  for (const auto& w : parts) {
    if (w.table != 0) {
      tables[w.table].push_back(&w);
    } else {
      keep_largest(w.counts);
      without.push_back(w.part);
    }
  }
  for (const auto& [table, windows] : tables) {
    DeviceCounts u{};
    for (size_t i = 0; i < u.size(); ++i) {
      std::vector<std::pair<uint64_t, uint64_t>> ranges;
      for (const auto* w : windows) ranges.emplace_back(w->start[i], w->end[i]);
      u[i] = union_length(std::move(ranges));
    }
    keep_largest(u);
  }
  if (without.empty() && tables.size() == 1) {
    rule = fmt::format("the union of its {} sessions' windows", parts.size());
  } else {
    rule = fmt::format("the largest of {} union(s) of windows and {} part(s) without one ({})",
                       tables.size(), without.size(), fmt::join(without, ", "));
  }
  return best;
}

DeviceCounts host_device_gaps(const std::vector<DeviceWindow>& parts) {
  std::map<uint64_t, std::vector<const DeviceWindow*>> tables;
  for (const auto& w : parts) {
    if (w.table != 0) tables[w.table].push_back(&w);
  }
  DeviceCounts gaps{};
  for (const auto& [table, windows] : tables) {
    for (size_t i = 0; i < gaps.size(); ++i) {
      std::vector<std::pair<uint64_t, uint64_t>> ranges;
      uint64_t first = UINT64_MAX, last = 0;
      for (const auto* w : windows) {
        if (w->end[i] < w->start[i]) continue;
        ranges.emplace_back(w->start[i], w->end[i]);
        first = std::min(first, w->start[i]);
        last = std::max(last, w->end[i]);
      }
      if (ranges.empty()) continue;
      gaps[i] += (last - first) - union_length(std::move(ranges));
    }
  }
  return gaps;
}

std::optional<uint64_t> host_device_requests_between(const std::vector<DeviceWindow>& parts) {
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  uint64_t first = UINT64_MAX, last = 0;
  for (const auto& w : parts) {
    if (w.table == 0) continue;  // no window, no span
    if (w.device_end == 0 || w.device_end < w.device_start) return std::nullopt;
    ranges.emplace_back(w.device_start, w.device_end);
    first = std::min(first, w.device_start);
    last = std::max(last, w.device_end);
  }
  if (ranges.empty()) return std::nullopt;
  return (last - first) - union_length(std::move(ranges));
}

}  // namespace ezio::converters
