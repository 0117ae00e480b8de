// SPDX-License-Identifier: GPL-2.0-only
#include "common/schema/properties.h"

#include <fmt/format.h>

#include <map>

#include "common/version.h"
#include "converters/merge/merger.h"

// What the merge found, the kernel's node properties and the clock (docs/merge.md, "The merge",
// step 6).
namespace ezio::converters::merge_stages {

// How a traced process's EZTrace times were moved to CLOCK_MONOTONIC.
void Merger::write_process_properties(Output& out, const Sidecar& p) {
  auto kp = kprocs.find(p.pid);
  if (kp == kprocs.end() || kp->second.group == OTF2_UNDEFINED_LOCATION_GROUP) return;
  otf2::Ref g = out.group_of(kp->second.group);
  out.w.location_group_property(g, schema::kEztraceFirstTimestamp, p.first_timestamp);
  // CLOCK_MONOTONIC - EZTrace time; differs from first_timestamp with EZTrace's MPI clock.
  out.w.location_group_property(g, schema::kEztraceTimeOffset, p.time_offset());
  out.w.location_group_property(g, schema::kEztraceClockErrorNs, p.clock_offset_error_ns);
}

namespace {

// A STRING property of the kernel archive's machine node, "" when absent.
std::string kernel_text(const Definitions& kd, Ref node, std::string_view name) {
  for (const auto& p : kd.node_properties) {
    if (p.owner == node && p.type == OTF2_TYPE_STRING && kd.str(p.name) == name)
      return kd.str(p.value.stringRef);
  }
  return {};
}

}  // namespace

// An application that ended badly before EZTrace's exit (MPI_Abort, _exit, a kill): the kernel
// recorded everything, but EZTrace, which writes its whole trace when the processes exit (in
// MPI_Finalize for MPI programs), wrote nothing. The kernel's "complete" would hide that.
std::string Merger::aborted_status(Ref knode) const {
  if (report.processes != 0 || !unreadable.empty()) return {};
  std::string end = kernel_text(kernel.defs, knode, schema::kApplicationEnd);
  if (kernel_text(kernel.defs, knode, schema::kStatus) != "complete" || end.empty() ||
      end == "exit status 0") {
    return {};
  }
  return fmt::format(
      "application-aborted: the application ended with {} before EZTrace's exit; the kernel "
      "layers are complete; EZTrace's user layer is lost (EZTrace writes its trace when the "
      "processes exit, in MPI_Finalize for MPI programs)",
      end);
}

// Global facts: the kernel's properties, and what the merge found; then the clock, and the
// archive is closed.
void Merger::write_properties(Output& out) {
  const Definitions& kd = kernel.defs;
  otf2::ArchiveWriter& w = out.w;
  const otf2::Ref machine = out.machine;
  report.comms = out.comms.comms_written();
  report.groups = out.comms.groups_written();
  report.clamped_events = out.clamped;
  report.status = aborted_status(out.knode);
  for (const auto& p : kd.node_properties) {
    if (p.owner != out.knode) continue;
    OTF2_AttributeValue v = p.value;
    std::string_view name = kd.str(p.name);
    // The kernel's events are copied of their trace model (EZIOTRACE::TRACE_MODEL kept): model
    // 2's readers put back model 1's attributes, which must then be defined, used or not.
    if (name == schema::kTraceModel) {
      for (const auto& [ref, a] : kd.attributes) out.kmap.attribute(ref);
    }
    if (p.type == OTF2_TYPE_STRING) {
      bool rewritten = name == schema::kStatus && !report.status.empty();
      v.stringRef = w.string(rewritten ? report.status : kd.str(v.stringRef));
    }
    // The merged archive's writer is the merge; the recorder's version is kept under its name.
    if (name == schema::kVersion) name = schema::kRecorderVersion;
    w.system_tree_node_property(machine, name, p.type, v);
  }
  w.system_tree_node_property(machine, schema::kVersion, std::string_view(version_string()));
  w.system_tree_node_property(machine, schema::kAlignmentViolations, report.violations);
  w.system_tree_node_property(machine, schema::kAlignmentCheckedCalls, report.checked_calls);
  w.system_tree_node_property(machine, schema::kAlignmentUnverifiable, report.unverifiable_calls);
  w.system_tree_node_property(machine, schema::kEztraceClosesWithoutSyscall,
                              report.closes_without_syscall);
  w.system_tree_node_property(machine, schema::kEztraceProcesses, report.processes);
  w.system_tree_node_property(machine, schema::kEztraceOwnIoFiltered, report.own_io_calls);
  write_user_level(out);
  w.system_tree_node_property(machine, schema::kAlignment, std::string_view(alignment_word()));
  uint64_t realtime = kd.realtime;
  if (realtime != OTF2_UNDEFINED_TIMESTAMP && out.t_min < kd.global_offset) {
    realtime -= kd.global_offset - out.t_min;
  }
  w.clock({1'000'000'000, out.t_min, out.t_max - out.t_min, realtime});
  w.close();
}

// EZIOTRACE::ALIGNMENT in words.
std::string Merger::alignment_word() const {
  if (report.violations) return "MISALIGNED: see EZIOTRACE::ALIGNMENT_VIOLATIONS";
  if (report.unverifiable_calls) {
    return "exact where verifiable: the kernel lost system-call events, see "
           "EZIOTRACE::ALIGNMENT_UNVERIFIABLE";
  }
  return "exact";
}

// The processes whose EZTrace archive cannot be read, with the reason, one archive at a time (MPI
// ranks share one).
std::string Merger::unreadable_summary() const {
  std::map<std::filesystem::path, std::pair<std::string, std::string>> by_archive;
  for (const auto& u : unreadable) {
    auto& [names, reason] = by_archive[u.anchor];
    names += fmt::format("{}{} [{}]", names.empty() ? "" : ", ", u.process.program, u.process.pid);
    reason = u.reason;
  }
  std::string out;
  for (const auto& [anchor, what] : by_archive) {
    out += fmt::format("{}{}: {}", out.empty() ? "" : "; ", what.first, what.second);
  }
  return out;
}

// What the archive holds of the user level: EZIOTRACE::USER_LEVEL says it in words, the
// processes without an EZTrace trace are counted and named.
void Merger::write_user_level(Output& out) {
  otf2::ArchiveWriter& w = out.w;
  const otf2::Ref machine = out.machine;
  std::string pids;
  for (uint32_t pid : report.untraced_pids)
    pids += fmt::format("{}{}", pids.empty() ? "" : " ", pid);
  w.system_tree_node_property(machine, schema::kProcessesWithoutUserTrace,
                              report.untraced_pids.size());
  w.system_tree_node_property(machine, schema::kPidsWithoutUserTrace, std::string_view(pids));
  std::string level = "complete";
  if (report.processes == 0 && unreadable.empty() && !report.status.empty()) {
    level =
        "missing: EZTrace wrote no trace, the archive holds the kernel layers only (the "
        "application ended before EZTrace's exit, where EZTrace writes its trace: "
        "EZIOTRACE::STATUS)";
  } else if (report.processes == 0 && unreadable.empty()) {
    level = "missing: EZTrace wrote no trace, the archive holds the kernel layers only";
  } else if (report.processes == 0) {
    level = fmt::format(
        "missing: EZTrace's trace cannot be read, the archive holds the kernel layers only ({})",
        unreadable_summary());
  } else if (!report.untraced_pids.empty() || !unreadable.empty()) {
    level = fmt::format(
        "partial: {} process(es) with kernel events have no EZTrace trace "
        "(EZIOTRACE::PIDS_WITHOUT_USER_TRACE)",
        report.untraced_pids.size());
    if (!unreadable.empty()) {
      level += fmt::format("; EZTrace's trace cannot be read: {}", unreadable_summary());
    }
  }
  w.system_tree_node_property(machine, schema::kUserLevel, std::string_view(level));
  report.user_level = level;
}
}  // namespace ezio::converters::merge_stages
