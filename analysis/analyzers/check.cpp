// SPDX-License-Identifier: GPL-2.0-only
#include "analysis/analyzers/check.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "analysis/analyzers/layer_stats.h"
#include "analysis/analyzers/trace_run.h"
#include "analysis/model/nesting.h"
#include "common/otf2/reader.h"
#include "common/schema/properties.h"

namespace ezio::analysis {
namespace {

// The stack's containment, one NestingCheck per host.
class HostNesting : public CallSink {
 public:
  using CallSink::CallSink;
  void begin_location(OTF2_LocationRef loc) override {
    CallSink::begin_location(loc);
    current_ = &hosts[defs().host_of(loc)];
    current_->begin_location();
  }
  void on_location_done(OTF2_LocationRef, uint64_t, uint64_t) override { current_->end_location(); }
  void on_call(const Call& c) override { current_->add(c, counts_as_io(c)); }
  std::map<std::string, NestingCheck> hosts;

 private:
  NestingCheck* current_ = nullptr;
};

uint64_t calls_checked(const NestingCheck& n) {
  uint64_t calls = 0;
  for (size_t i = 0; i < kLayerCount; ++i) {
    calls += n.outermost[i];
    for (size_t j = 0; j < kLayerCount; ++j) calls += n.inside[j][i];
  }
  return calls;
}

// The hosts: the system-tree nodes that hold location groups, with their clock properties.
std::vector<HostCheck> hosts_of(const otf2::Definitions& d) {
  std::vector<HostCheck> hosts;
  std::vector<otf2::Ref> nodes;
  for (const auto& [id, g] : d.location_groups) {
    if (std::find(nodes.begin(), nodes.end(), g.node) == nodes.end()) nodes.push_back(g.node);
  }
  for (otf2::Ref node : nodes) {
    HostCheck& h = hosts.emplace_back();
    auto n = d.nodes.find(node);
    h.host = n == d.nodes.end() ? std::string() : d.str(n->second.name);
    for (const auto& p : d.node_properties) {
      if (p.owner != node) continue;
      const std::string& name = d.str(p.name);
      if (name == schema::kClockOffsetStartNs) h.offset_start_ns = p.value.int64;
      if (name == schema::kClockOffsetEndNs) h.offset_end_ns = p.value.int64;
      if (name == schema::kClockErrorNs) h.error_ns = p.value.uint64;
      if (name == schema::kAlignmentViolations) h.alignment_violations = p.value.uint64;
    }
  }
  return hosts;
}

Cell optional_ns(const auto& v) {
  return v ? seconds_cell(static_cast<double>(*v) * 1e-9) : no_value_cell();
}

}  // namespace

uint64_t CheckResult::inversions() const {
  uint64_t n = 0;
  for (const auto& h : hosts) n += h.inversions;
  return n;
}

uint64_t CheckResult::violations() const {
  uint64_t n = inversions() + messages.violations();
  for (const auto& h : hosts) n += h.alignment_violations.value_or(0);
  return n;
}

CheckResult check_archive(const std::filesystem::path& trace) {
  CheckResult r;
  {
    otf2::ArchiveReader reader(trace);
    r.hosts = hosts_of(reader.defs());
    MessageCheck messages(reader.defs());
    reader.read_events(messages);
    r.messages = messages.finish();
  }
  TraceReader reader(trace);
  HostNesting nesting(reader.defs());
  Report ignored;
  run_trace(reader, nesting, Filters{}, ignored);
  for (auto& h : r.hosts) {
    auto n = nesting.hosts.find(h.host);
    if (n == nesting.hosts.end()) continue;
    h.calls_checked = calls_checked(n->second);
    h.inversions = n->second.inversions;
    for (const auto& d : n->second.inversion_details) {
      r.inversion_details.push_back(fmt::format("{}: {}", h.host, d));
    }
  }
  return r;
}

Report check_report(const CheckResult& r) {
  Report report;
  Table hosts;
  hosts.name = "hosts";
  hosts.title = "Hosts: clock map and stack containment";
  hosts.columns = {{"host", "Host"},
                   {"clock_offset_start_s", "Clock offset"},
                   {"clock_error_s", "Error bound"},
                   {"calls_checked", "Calls checked"},
                   {"nesting_inversions", "Inversions"},
                   {"alignment_violations", "Alignment violations"}};
  for (const auto& h : r.hosts) {
    hosts.add({text_cell(h.host), optional_ns(h.offset_start_ns), optional_ns(h.error_ns),
               count_cell(h.calls_checked), count_cell(h.inversions),
               h.alignment_violations ? count_cell(*h.alignment_violations) : no_value_cell()});
  }
  report.tables.push_back(std::move(hosts));
  Table messages;
  messages.name = "messages";
  messages.title = "MPI messages: received before they were sent, per pair of hosts";
  messages.columns = {{"sender_host", "Sender host"},
                      {"receiver_host", "Receiver host"},
                      {"messages", "Messages"},
                      {"received_before_sent", "Received before sent"},
                      {"worst_s", "Worst gap"}};
  for (const auto& p : r.messages.pairs) {
    messages.add({text_cell(p.sender_host), text_cell(p.receiver_host), count_cell(p.messages),
                  count_cell(p.received_before),
                  p.received_before ? seconds_cell(static_cast<double>(p.worst_ns) * 1e-9)
                                    : no_value_cell()});
  }
  report.tables.push_back(std::move(messages));
  Table total;
  total.name = "check";
  total.title = "Check";
  total.columns = {{"violations", "Violations"},
                   {"unmatched_sends", "Unmatched sends"},
                   {"unmatched_receives", "Unmatched receives"},
                   {"unresolved", "Unresolved MPI events"}};
  total.add({count_cell(r.violations()), count_cell(r.messages.unmatched_sends),
             count_cell(r.messages.unmatched_receives), count_cell(r.messages.unresolved)});
  report.tables.push_back(std::move(total));
  for (const auto& d : r.inversion_details) report.notes.push_back("Inverted nesting: " + d + ".");
  if (r.messages.pairs.empty()) {
    report.notes.push_back(
        "No MPI point-to-point message in the archive (EZTrace's mpich or "
        "openmpi module writes them): causality not checked.");
  }
  report.notes.push_back(
      "A message is received before it was sent when its receive call ended before its send call "
      "started: the two hosts' clocks are misaligned by more than the message took. Worst gap: "
      "how much earlier.");
  return report;
}

std::vector<std::string> check_summary(const CheckResult& r) {
  std::vector<std::string> lines;
  for (const auto& h : r.hosts) {
    lines.push_back(fmt::format(
        "host {}: clock error bound {}, {} calls checked, {} nesting inversion(s)", h.host,
        h.error_ns ? human_seconds(static_cast<double>(*h.error_ns) * 1e-9) : "-", h.calls_checked,
        h.inversions));
  }
  for (const auto& p : r.messages.pairs) {
    lines.push_back(fmt::format(
        "messages {} -> {}: {}, {} received before sent{}", p.sender_host, p.receiver_host,
        p.messages, p.received_before,
        p.received_before
            ? " (worst by " + human_seconds(static_cast<double>(p.worst_ns) * 1e-9) + ")"
            : ""));
  }
  lines.push_back(fmt::format("check: {} violation(s), {} MPI message(s) paired", r.violations(),
                              r.messages.messages()));
  return lines;
}

}  // namespace ezio::analysis
