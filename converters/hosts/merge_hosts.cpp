// SPDX-License-Identifier: GPL-2.0-only
#include "converters/hosts/merge_hosts.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <memory>

#include "common/error.h"
#include "common/otf2/reader.h"
#include "common/otf2/writer.h"
#include "common/schema/properties.h"
#include "common/version.h"
#include "converters/hosts/host_properties.h"
#include "converters/merge/definition_mapper.h"

namespace ezio::converters {
namespace {

using otf2::Definitions;
using otf2::Ref;

// Location ids of host i are moved up by i << kHostShift: every host uses TIDs as ids, and a TID
// of one host may be another's. Ids stay below 2^64 for 2^16 hosts (a part's own ids stay below
// 2^40: TIDs, and devices' (1 << 32) | n).
constexpr unsigned kHostShift = 44;

// The writer's state shared by the parts, and the time range written.
struct Output {
  explicit Output(const std::filesystem::path& dir) : w(dir), comms(w), shared{w, {}, comms, {}} {}
  otf2::ArchiveWriter w;
  CommMapper comms;
  SharedDefinitions shared;
  uint64_t t_min = UINT64_MAX, t_max = 0;
  // CLOCK_REALTIME at realtime_at (reference time), from the first part that knows it.
  uint64_t realtime = OTF2_UNDEFINED_TIMESTAMP, realtime_at = 0;
};

// Streams one part's events into the output, each on its moved location at its mapped time.
class PartWriter : public otf2::EventVisitor {
 public:
  PartWriter(Output& out, const HostPart& p, const Definitions& defs, const Definitions& comm_defs,
             uint64_t shift)
      : out_(out), part_(p), map_(defs, out.shared, {}, &comm_defs), shift_(shift) {}
  void begin_location(OTF2_LocationRef) override { writer_ = nullptr; }
  void event(OTF2_LocationRef loc, const otf2::Event& e) override {
    if (!writer_) writer_ = out_.w.events(loc + shift_);
    uint64_t t = std::max(reference_time(part_, e.time), last_);
    last_ = t;
    out_.t_min = std::min(out_.t_min, t);
    out_.t_max = std::max(out_.t_max, t);
    map_.write(writer_, e, t);
    ++events;
  }
  void end_location(OTF2_LocationRef loc) override {
    if (writer_) out_.w.finish_events(loc + shift_);
    writer_ = nullptr;
    last_ = 0;
  }
  uint64_t events = 0;

 private:
  Output& out_;
  const HostPart& part_;
  DefinitionMapper map_;
  uint64_t shift_;
  OTF2_EvtWriter* writer_ = nullptr;
  uint64_t last_ = 0;
};

// A device location's count of unattributed requests (bytes), once per host and device: the
// largest part's (HostNode).
void device_count(Output& out, const Definitions& d, HostNode& host,
                  const otf2::LocationProperty& p, uint64_t shift) {
  const std::string key = d.str(d.locations.at(p.location).name) + "\n" + d.str(p.name);
  if (!host.device_counts_written.insert(key).second) return;
  out.w.location_property(p.location + shift, d.str(p.name), host.device_counts.at(key));
}

// The part's location groups and locations, under its host's node; a device's group is the host's
// one for all its parts.
void define_locations(Output& out, const Definitions& d, HostNode& host, uint64_t shift) {
  std::map<Ref, Ref> groups;
  for (const auto& [id, g] : d.location_groups) {
    const std::string& name = d.str(g.name);
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
    if (p.type != OTF2_TYPE_UINT64) continue;
    if (is_device_name(d.str(d.locations.at(p.location).name)) &&
        d.str(p.name).starts_with("EZIOTRACE::UNATTRIBUTED")) {
      device_count(out, d, host, p, shift);
    } else {
      out.w.location_property(p.location + shift, d.str(p.name), p.value.uint64);
    }
  }
}

// Merges one part; its problem is set when its events cannot all be read.
uint64_t merge_part(Output& out, HostPart& p, otf2::ArchiveReader& reader,
                    const Definitions& comm_defs, Ref root, HostNode& host, HostTotals& totals,
                    uint64_t shift) {
  const Definitions& d = reader.defs();
  if (!host.defined) {
    host.defined = true;
    host.node = out.w.system_tree_node(p.host, "node", root);
    write_host_properties(out.w, host, totals);
  }
  out.shared.machine = host.node;  // files are scoped to their host
  p.incomplete = incomplete_recording(d);
  define_locations(out, d, host, shift);
  if (out.realtime == OTF2_UNDEFINED_TIMESTAMP && d.realtime != OTF2_UNDEFINED_TIMESTAMP) {
    // The part's realtime is of its own global offset, which maps onto the reference's timeline.
    out.realtime = d.realtime;
    out.realtime_at = reference_time(p, d.global_offset);
  }
  PartWriter writer(out, p, d, comm_defs, shift);
  try {
    reader.read_events(writer);
  } catch (const Error& e) {
    p.problem = fmt::format("merged up to an unreadable event file: {}", e.what());
    spdlog::warn("{}: {}", p.given.string(), p.problem);
  }
  return writer.events;
}

// A part's groups and communicators with the names they use: what CommMapper needs of every part
// at once.
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

std::string hosts_status(const std::vector<HostPart>& parts) {
  std::string missing;
  for (const auto& p : parts) {
    const std::string& why = p.problem.empty() ? p.incomplete : p.problem;
    if (why.empty()) continue;
    missing += fmt::format("{}{} ({}): {}", missing.empty() ? "" : "; ",
                           p.host.empty() ? "?" : p.host, p.given.string(), why);
  }
  return missing.empty() ? "complete" : "partial: " + missing;
}

}  // namespace

HostsReport merge_hosts(const std::vector<std::filesystem::path>& given,
                        const std::filesystem::path& out_dir, std::vector<HostPart> absent,
                        const std::string& interrupted) {
  HostsReport report;
  report.interrupted = interrupted;
  report.parts = load_host_parts(given);
  report.parts.insert(report.parts.end(), std::make_move_iterator(absent.begin()),
                      std::make_move_iterator(absent.end()));
  if (std::none_of(report.parts.begin(), report.parts.end(),
                   [](const HostPart& p) { return p.problem.empty(); })) {
    fail("no part can be merged: {}", hosts_status(report.parts).substr(9));
  }
  Output out(out_dir);
  const Ref root = out.w.system_tree_node("cluster", "machine");
  // Every part's communicators first: their location groups span the hosts. Only the groups and
  // comms of each part are kept for that; the rest of its definitions is read again with its
  // events, so that memory holds one part's definitions at a time.
  std::vector<std::unique_ptr<Definitions>> comm_defs(report.parts.size());
  std::map<const Definitions*, uint64_t> shifts;
  std::map<std::string, HostNode> hosts;  // several parts of one host share its node
  for (size_t i = 0; i < report.parts.size(); ++i) {
    HostPart& p = report.parts[i];
    if (!p.problem.empty()) {
      spdlog::warn("{}: not merged: {}", p.given.string(), p.problem);
      continue;
    }
    otf2::ArchiveReader reader(p.anchor);
    comm_defs[i] = comm_definitions(reader.defs());
    hosts[p.host].add(p, reader.defs());
    shifts[comm_defs[i].get()] = uint64_t(shifts.size()) << kHostShift;
    out.comms.add_archive(*comm_defs[i]);
  }
  out.comms.define_locations(
      [&shifts](const Definitions& d, uint64_t loc) { return loc + shifts.at(&d); });
  HostTotals totals;
  for (size_t i = 0; i < report.parts.size(); ++i) {
    if (!comm_defs[i]) continue;
    otf2::ArchiveReader reader(report.parts[i].anchor);
    HostNode& host = hosts.at(report.parts[i].host);
    report.hosts += !host.defined;
    report.events += merge_part(out, report.parts[i], reader, *comm_defs[i], root, host, totals,
                                shifts.at(comm_defs[i].get()));
  }
  report.status = hosts_status(report.parts);
  write_root_properties(out.w, root, report, totals);
  if (out.t_min == UINT64_MAX) out.t_min = out.t_max = out.realtime_at;
  if (out.realtime != OTF2_UNDEFINED_TIMESTAMP) {
    out.realtime += out.t_min - out.realtime_at;  // two's complement: either direction
  }
  out.w.clock({1'000'000'000, out.t_min, out.t_max - out.t_min, out.realtime});
  out.w.close();
  return report;
}

}  // namespace ezio::converters
