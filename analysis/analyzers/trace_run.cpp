// SPDX-License-Identifier: GPL-2.0-only
#include "analysis/analyzers/trace_run.h"

#include <iostream>

#include "analysis/analyzers/progress.h"
#include "common/log.h"
#include "common/schema/properties.h"

namespace ezio::analysis {

void run_trace(TraceReader& reader, CallSink& sink, const Filters& filters, Report& report) {
  const auto& defs = reader.defs();
  uint64_t events = 0;
  {
    Progress progress;
    reader.read_events(
        sink,
        [&](const otf2::ReadProgress& p) {
          events = p.events;
          progress.update(p);
        },
        [&](OTF2_LocationRef loc) { return filters.location_selected(defs, loc); });
  }

  auto& meta = report.meta;
  meta["trace"] = reader.anchor().string();
  meta["locations"] = defs.locations.size();
  meta["events"] = events;
  meta["timer_resolution"] = defs.resolution;
  nlohmann::json lost = nlohmann::json::object();
  std::string lost_text;
  for (auto& [name, value] : defs.node_uint_properties) {
    static constexpr std::string_view prefix = schema::kLostPrefix;
    if (name.rfind(prefix, 0) != 0) continue;
    std::string layer = name.substr(prefix.size());
    lost[layer] = value;
    if (value > 0) lost_text += fmt::format("{}{} {}", lost_text.empty() ? "" : ", ", layer, value);
  }
  meta["lost_events"] = lost;
  if (!lost_text.empty()) {
    spdlog::warn("events were lost while recording ({}): figures of those layers are lower bounds",
                 lost_text);
    report.notes.push_back(fmt::format("Lost events: {} (figures are lower bounds).", lost_text));
  }
  if (auto it = defs.node_string_properties.find(schema::kStatus);
      it != defs.node_string_properties.end()) {
    meta["status"] = it->second;
    if (it->second == "snapshot") {
      // A flight recorder's window of a running job (docs/flight-recorder.md): what it holds is
      // whole, calls across its edges are left out.
      spdlog::warn(
          "the recording is a snapshot of a running job: calls across its window's "
          "edges are left out");
      report.notes.push_back("Recording status: snapshot of a running job (flight recorder).");
    } else if (it->second != "complete") {
      // A status with its explanation ("application-aborted: ...") says what is missing itself.
      bool explained = it->second.find(':') != std::string::npos;
      spdlog::warn("the recording is {}{}", it->second,
                   explained ? "" : ": the trace may end early");
      report.notes.push_back(fmt::format("Recording status: {}.", it->second));
    }
  }
  if (auto it = defs.node_string_properties.find(schema::kVersion);
      it != defs.node_string_properties.end()) {
    report.archive_version = it->second;
  }
  for (const char* key : {schema::kCommand, schema::kUserCommand}) {
    if (auto it = defs.node_string_properties.find(key); it != defs.node_string_properties.end())
      meta["command"] = it->second;  // the user's, when the archive has it
  }
  if (auto it = defs.node_string_properties.find(schema::kKernelRelease);
      it != defs.node_string_properties.end()) {
    meta["kernel"] = it->second;
  }
  const Anomalies& a = sink.anomalies();
  meta["anomalies"] = {
      {"unclosed_calls", a.unclosed},         {"unmatched_leaves", a.unmatched},
      {"misnested_calls", a.misnested},       {"backward_timestamps", a.backwards},
      {"unknown_regions", a.unknown_regions}, {"unfinished_requests", a.unfinished_requests}};
  if (a.unclosed + a.unmatched + a.misnested + a.backwards + a.unknown_regions +
          a.unfinished_requests >
      0) {
    spdlog::warn(
        "trace defects tolerated: {} calls never left (closed at their location's last event), "
        "{} leaves without enter, {} mis-nested calls, {} backward timestamps, {} undefined "
        "regions, {} I/O requests never completed (ignored)",
        a.unclosed, a.unmatched, a.misnested, a.backwards, a.unknown_regions,
        a.unfinished_requests);
  }
  if (events == 0) {
    const char* what =
        filters.threads.empty() ? "the trace holds no events" : "no events in the selected threads";
    spdlog::warn("{}: {}", reader.anchor().string(), what);
    report.notes.push_back(fmt::format("No events: {}.", what));
  }
}

void emit(const Report& report, Format format) {
  print(report, format, std::cout);
  std::cout.flush();
}

}  // namespace ezio::analysis
