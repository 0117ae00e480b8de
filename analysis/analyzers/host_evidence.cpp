// SPDX-License-Identifier: GPL-2.0-only
#include "analysis/analyzers/host_evidence.h"

#include <charconv>

#include "common/schema/properties.h"

namespace ezio::analysis {
namespace {

template <typename T>
std::optional<T> number(const std::map<std::string, std::string>& props, std::string_view key) {
  auto it = props.find(std::string(key));
  if (it == props.end()) return std::nullopt;
  T v{};
  const std::string& s = it->second;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

std::string text(const std::map<std::string, std::string>& props, std::string_view key) {
  auto it = props.find(std::string(key));
  return it == props.end() ? std::string() : it->second;
}

}  // namespace

HostTally::HostTally(const Definitions& defs) : defs_(defs) {}

void HostTally::begin_location(OTF2_LocationRef loc) {
  std::string host = defs_.host_of(loc);
  current_ = &hosts_[host];
  current_->name = host;
  process_ = defs_.process_of(loc);
  device_ = defs_.is_device(loc);
  const LocationDef* d = defs_.location(loc);
  location_name_ = d ? d->name : std::string();
}

void HostTally::add(const Call& c) {
  if (!current_) return;
  const auto l = static_cast<size_t>(c.info->layer);
  if (c.has_bytes && c.op != Op::kOther) {
    current_->bytes[l][c.op == Op::kRead ? 0 : 1] += c.bytes;
  }
  if (device_) {
    if (c.info->layer == Layer::kBlock) ++current_->block_requests;
    current_->devices.insert(location_name_);
    return;
  }
  if (process_.empty()) return;
  current_->processes.insert(process_);
  if (c.info->layer == Layer::kUser) current_->ranks.insert(process_);
}

std::vector<HostEvidence> HostTally::finish() {
  std::vector<HostEvidence> out;
  std::set<std::string> names;
  for (const auto& [group, host] : defs_.group_hosts) names.insert(host);
  if (names.size() < 2) return out;
  for (const std::string& name : names) {
    HostEvidence h = std::move(hosts_[name]);
    h.name = name;
    auto p = defs_.host_properties.find(name);
    if (p != defs_.host_properties.end()) {
      const auto& props = p->second;
      for (const auto& [key, value] : props) {
        if (key.starts_with(schema::kOutsideWindowsPrefix)) {
          h.outside_windows =
              h.outside_windows.value_or(0) + number<uint64_t>(props, key).value_or(0);
        }
        if (!key.starts_with(schema::kLostPrefix)) continue;
        if (auto n = number<uint64_t>(props, key)) {
          h.lost[key.substr(std::string_view(schema::kLostPrefix).size())] = *n;
        }
      }
      h.kernel = text(props, schema::kKernelRelease);
      h.clock_offset_ns = number<int64_t>(props, schema::kClockOffsetStartNs);
      h.clock_error_ns = number<uint64_t>(props, schema::kClockErrorNs);
      h.slurm_job = text(props, schema::kSlurmJobId);
      h.slurm_step = text(props, schema::kSlurmStepId);
    }
    out.push_back(std::move(h));
  }
  return out;
}

}  // namespace ezio::analysis
