// SPDX-License-Identifier: GPL-2.0-only
#include "converters/hosts/merge_hosts.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>

#include "common/error.h"
#include "common/otf2/reader.h"
#include "common/otf2/writer.h"
#include "common/schema/properties.h"
#include "common/version.h"
#include "converters/hosts/assemble_part.h"
#include "converters/hosts/host_output.h"
#include "converters/hosts/host_properties.h"

namespace ezio::converters {
namespace {

using otf2::Definitions;
using otf2::Ref;

// Location ids of host i are moved up by i << kHostShift: every host uses TIDs as ids, and a TID
// of one host may be another's. Ids stay below 2^64 for 2^16 hosts (a part's own ids stay below
// 2^40: TIDs, and devices' (1 << 32) | n).
constexpr unsigned kHostShift = 44;

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

// Merges one part by reading and rewriting its events; its problem is set when they cannot all
// be read.
uint64_t merge_part(Output& out, HostPart& p, otf2::ArchiveReader& reader,
                    const Definitions& comm_defs, uint64_t shift) {
  PartWriter writer(out, p, reader.defs(), comm_defs, shift);
  try {
    reader.read_events(writer);
  } catch (const Error& e) {
    p.problem = fmt::format("merged up to an unreadable event file: {}", e.what());
    spdlog::warn("{}: {}", p.given.string(), p.problem);
  }
  return writer.events;
}

// How a part gets into the job archive, decided when its definitions are first read.
struct PartPlan {
  std::unique_ptr<Definitions> comm_defs;  // null: the part is not merged
  uint64_t shift = 0;                      // added to its location ids
  std::set<uint64_t> elsewhere;            // its ranks of other hosts (ranks_elsewhere)
  // Its stand-ins for ranks of other hosts that the job's ranks do not need: not defined.
  std::set<OTF2_LocationRef> dropped;
  std::string rewrite;  // why its events are read and rewritten; "": it is assembled
};

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
                        const std::string& interrupted, bool rewrite_events) {
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
  // comms of each part are kept for that; the rest of its definitions is read again when the part
  // is merged, so that memory holds one part's definitions at a time.
  std::vector<PartPlan> plans(report.parts.size());
  std::map<const Definitions*, uint64_t> shifts;
  std::map<std::string, HostNode> hosts;  // several parts of one host share its node
  ParadigmOrder paradigms;
  for (size_t i = 0; i < report.parts.size(); ++i) {
    HostPart& p = report.parts[i];
    if (!p.problem.empty()) {
      spdlog::warn("{}: not merged: {}", p.given.string(), p.problem);
      continue;
    }
    otf2::ArchiveReader reader(p.anchor);
    PartPlan& plan = plans[i];
    plan.comm_defs = comm_definitions(reader.defs());
    plan.shift = uint64_t(shifts.size()) << kHostShift;
    shifts[plan.comm_defs.get()] = plan.shift;
    p.incomplete = incomplete_recording(reader.defs());
    hosts[p.host].add(p, reader.defs());
    plan.elsewhere = ranks_elsewhere(reader.defs());
    out.comms.add_archive(*plan.comm_defs, plan.elsewhere);
    plan.rewrite = rewrite_events ? "asked for (--rewrite-events)"
                                  : assembly_obstacle(p, reader.defs(), out_dir, paradigms);
    if (plan.rewrite.empty()) {
      spdlog::debug("{} ({}): assembled: its event files linked as they are", p.host,
                    p.given.string());
    } else {
      spdlog::debug("{} ({}): events read and rewritten: {}", p.host, p.given.string(),
                    plan.rewrite);
    }
  }
  // One job's ranks are the locations of the hosts holding them (comm_mapper.h); a part's
  // stand-ins for other hosts' ranks are defined only when no host holds that rank.
  std::map<const Definitions*, std::set<uint64_t>> ranked;
  out.comms.define_locations([&](const Definitions& d, uint64_t loc) {
    ranked[&d].insert(loc);
    return loc + shifts.at(&d);
  });
  for (PartPlan& plan : plans) {
    if (!plan.comm_defs) continue;
    const std::set<uint64_t>& used = ranked[plan.comm_defs.get()];
    for (uint64_t loc : plan.elsewhere) {
      if (!used.count(loc)) plan.dropped.insert(loc);
    }
  }
  HostTotals totals;
  std::vector<EventLink> links;
  // The assembled parts first: the full merge defines I/O paradigms as its events use them, which
  // could take the ids the assembled parts keep.
  for (const bool assembling : {true, false}) {
    for (size_t i = 0; i < report.parts.size(); ++i) {
      const PartPlan& plan = plans[i];
      if (!plan.comm_defs || plan.rewrite.empty() != assembling) continue;
      HostPart& p = report.parts[i];
      otf2::ArchiveReader reader(p.anchor);
      HostNode& host = hosts.at(p.host);
      report.hosts += !host.defined;
      define_part(out, p, reader.defs(), root, host, totals, plan.shift, plan.dropped);
      if (assembling) {
        report.events +=
            assemble_part(out, p, reader.defs(), *plan.comm_defs, plan.shift, plan.dropped, links);
        ++report.assembled;
      } else {
        report.events += merge_part(out, p, reader, *plan.comm_defs, plan.shift);
        ++report.rewritten;
      }
    }
  }
  report.status = hosts_status(report.parts);
  write_root_properties(out.w, root, report, totals);
  if (out.t_min == UINT64_MAX) out.t_min = out.t_max = out.realtime_at;
  if (out.realtime != OTF2_UNDEFINED_TIMESTAMP) {
    out.realtime += out.t_min - out.realtime_at;  // two's complement: either direction
  }
  out.w.clock({1'000'000'000, out.t_min, out.t_max - out.t_min, out.realtime});
  out.w.close();
  link_event_files(links);
  return report;
}

}  // namespace ezio::converters
