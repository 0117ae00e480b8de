// SPDX-License-Identifier: GPL-2.0-only
#include "analysis/analyzers/advise.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <iostream>

#include "analysis/analyzers/advise_rules.h"
#include "analysis/analyzers/table.h"
#include "common/error.h"

namespace ezio::analysis {

std::span<const Rule> advise_rules() {
  static const std::vector<Rule> rules = {
      {"lost-events", {}, rule_lost_events},
      {"incomplete-recording", {}, rule_incomplete_recording},
      {"small-requests",
       {{"small_request_bytes", 65536}, {"small_share", 0.10}, {"small_min_count", 1000}},
       rule_small_requests},
      {"random-access", {{"random_share", 0.20}, {"random_min_accesses", 100}}, rule_random_access},
      {"read-modify-write",
       {{"misaligned_share", 0.10}, {"rmw_min_writes", 100}, {"rmw_min_reads", 10}},
       rule_read_modify_write},
      {"sync-cost",
       {{"sync_min_count", 10}, {"sync_time_share", 0.20}, {"sync_min_bytes", 1048576}},
       rule_sync_cost},
      {"cache-read-misses",
       {{"read_miss_share", 0.50}, {"read_miss_min_pages", 256}},
       rule_cache_read_misses},
      {"readahead-waste",
       {{"readahead_waste_factor", 1.5}, {"readahead_waste_min_bytes", 4194304}},
       rule_readahead_waste},
      {"dirty-throttling", {{"dirty_throttle_share", 0.05}}, rule_dirty_throttling},
      {"device-saturated",
       {{"saturation_queue_ratio", 1.0},
        {"saturation_depth", 4},
        {"saturation_min_requests", 100},
        {"saturation_service_ratio", 2.0},
        {"saturation_min_samples", 10}},
       rule_device_saturated},
      {"metadata-storm",
       {{"metadata_min_count", 1000}, {"metadata_rate", 1000}, {"metadata_time_share", 0.30}},
       rule_metadata_storm},
      {"useless-buffering",
       {{"stdio_min_calls", 1000}, {"stdio_passthrough_share", 0.90}},
       rule_useless_buffering},
      {"reopened-files", {{"reopen_min_count", 100}}, rule_reopened_files},
      {"thread-interference",
       {{"sci_threshold", 0.5}, {"sci_min_calls", 100}},
       rule_thread_interference},
      // MPI-IO and HDF5 (advise_rules_mpiio.cpp, advise_rules_hdf5.cpp).
      {"mpiio-small-independent",
       {{"mpiio_small_bytes", 1048576},
        {"mpiio_small_share", 0.5},
        {"mpiio_small_min_count", 100},
        {"mpiio_min_ranks", 2}},
       rule_mpiio_small_independent},
      {"collective-small-requests",
       {{"collective_small_bytes", 65536},
        {"collective_align_bytes", 4096},
        {"collective_bad_share", 0.5},
        {"collective_min_requests", 10}},
       rule_collective_small_requests},
      {"shared-file-pointer",
       {{"shared_pointer_time_share", 0.3}, {"shared_pointer_min_calls", 10}},
       rule_shared_file_pointer},
      {"hdf5-small-writes",
       {{"hdf5_small_write_bytes", 65536},
        {"hdf5_small_share", 0.5},
        {"hdf5_small_min_writes", 100}},
       rule_hdf5_small_writes},
      {"hdf5-small-chunks", {{"hdf5_min_chunk_bytes", 4096}}, rule_hdf5_small_chunks},
      {"hdf5-metadata",
       {{"hdf5_metadata_bytes", 4096},
        {"hdf5_metadata_region_bytes", 1048576},
        {"hdf5_metadata_time_share", 0.3},
        {"hdf5_metadata_min_ops", 10}},
       rule_hdf5_metadata},
  };
  return rules;
}

Finding& RuleContext::add(Level level, std::string title) {
  out_.findings.emplace_back(std::string(rule_), level, std::move(title));
  return out_.findings.back();
}

void RuleContext::not_observed(std::string why) {
  out_.unobserved.push_back({std::string(rule_), std::move(why)});
}

std::string pct(double fraction) { return fmt::format("{:.1f} %", 100.0 * fraction); }

bool layer_observed(const Evidence& ev, Layer l) {
  return ev.observed[static_cast<size_t>(l)].observed;
}

Layer app_layer(const Evidence& ev) {
  return layer_observed(ev, Layer::kSyscall) ? Layer::kSyscall : Layer::kUser;
}

std::vector<std::string> top_files(const RuleContext& c, uint64_t (*get)(const FileEvidence&),
                                   size_t n) {
  std::vector<std::pair<uint64_t, const FileEvidence*>> v;
  for (const FileEvidence* f : c.files) {
    if (uint64_t k = get(*f)) v.emplace_back(k, f);
  }
  std::stable_sort(v.begin(), v.end(), [](auto& a, auto& b) { return a.first > b.first; });
  std::vector<std::string> out;
  for (size_t i = 0; i < v.size() && i < n; ++i) {
    out.push_back(fmt::format("{} ({})", v[i].second->path, v[i].first));
  }
  return out;
}

Thresholds::Thresholds() {
  for (const Rule& r : advise_rules()) {
    for (const ThresholdDef& d : r.thresholds) values[std::string(d.name)] = d.value;
  }
}

double Thresholds::operator[](const std::string& name) const { return values.at(name); }

void Thresholds::load(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail("cannot read {}: {}", path, errno_text(errno));
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object()) fail("{}: not a JSON object of thresholds", path);
  for (auto& [k, v] : j.items()) {
    if (!values.contains(k))
      fail("{}: unknown threshold '{}' (docs/analysis.md lists them)", path, k);
    if (!v.is_number()) fail("{}: threshold '{}' is not a number", path, k);
    values[k] = v.get<double>();
  }
}

std::string_view level_name(Level l) {
  static constexpr std::string_view names[] = {"high", "warn", "info"};
  return names[static_cast<size_t>(l)];
}

EvidenceOptions evidence_options(const Thresholds& t) {
  EvidenceOptions eo;
  eo.small_request_bytes = static_cast<uint64_t>(t["small_request_bytes"]);
  eo.crowded_depth = static_cast<uint64_t>(t["saturation_depth"]);
  eo.all = t.all;
  auto bytes = [&](const char* name) { return static_cast<uint64_t>(t[name]); };
  eo.hpc.mpiio_small_bytes = bytes("mpiio_small_bytes");
  eo.hpc.collective_small_bytes = bytes("collective_small_bytes");
  eo.hpc.collective_align_bytes = bytes("collective_align_bytes");
  eo.hpc.hdf5_small_write_bytes = bytes("hdf5_small_write_bytes");
  eo.hpc.hdf5_metadata_bytes = bytes("hdf5_metadata_bytes");
  eo.hpc.hdf5_metadata_region_bytes = bytes("hdf5_metadata_region_bytes");
  return eo;
}

Advice advise(const Evidence& ev, const Thresholds& t) {
  Advice a;
  std::vector<const FileEvidence*> files;
  for (const FileEvidence& f : ev.files) {
    if (f.origin == FileOrigin::kApplication) {
      files.push_back(&f);
    } else {
      a.left_out.push_back({f.path, f.origin});
    }
  }
  for (const Rule& r : advise_rules()) {
    a.rules.emplace_back(r.name);
    RuleContext c(ev, t, files, r.name, a);
    r.check(c);
  }
  std::stable_sort(a.findings.begin(), a.findings.end(),
                   [](auto& x, auto& y) { return x.level < y.level; });
  return a;
}

nlohmann::json advice_json(const Advice& a, const Evidence& ev, const Thresholds& t) {
  nlohmann::json j;
  j["eziotrace_version"] = version_json(ev.version);
  j["meta"] = {
      {"trace", ev.trace}, {"events", ev.events}, {"lost_events", ev.lost}, {"status", ev.status}};
  if (!ev.kernel.empty()) j["meta"]["kernel"] = ev.kernel;
  j["findings"] = nlohmann::json::array();
  for (auto& f : a.findings) {
    j["findings"].push_back({{"rule", f.rule},
                             {"level", level_name(f.level)},
                             {"title", f.title},
                             {"evidence", f.evidence},
                             {"numbers", f.numbers},
                             {"where", f.where},
                             {"advice", f.advice},
                             {"section", f.section}});
  }
  j["not_observed"] = nlohmann::json::array();
  for (auto& u : a.unobserved)
    j["not_observed"].push_back({{"rule", u.rule}, {"reason", u.reason}});
  j["left_out"] = nlohmann::json::array();
  for (auto& l : a.left_out)
    j["left_out"].push_back({{"file", l.path}, {"origin", origin_key(l.origin)}});
  j["rules"] = a.rules;
  j["thresholds"] = t.values;
  return j;
}

namespace {

// One line per kind of file left out, naming a few: the reader sees that they were seen, and why
// they are not findings.
void print_left_out(const Advice& a, std::ostream& out) {
  constexpr size_t kNamed = 4;
  for (auto [origin, what] :
       {std::pair{FileOrigin::kLauncher, "files of the MPI launcher (mpiexec, hydra_pmi_proxy...)"},
        std::pair{FileOrigin::kSystem,
                  "start-up and system files (loader, libraries, locale, "
                  "/etc, /proc, /sys)"},
        std::pair{FileOrigin::kInherited,
                  "descriptors inherited from before tracing (terminal, "
                  "pipe)"}}) {
    std::vector<std::string_view> names;
    for (auto& l : a.left_out) {
      if (l.origin == origin) names.push_back(l.path);
    }
    if (names.empty()) continue;
    std::string shown;
    for (size_t i = 0; i < names.size() && i < kNamed; ++i)
      shown += fmt::format("{}{}", i ? ", " : "", names[i]);
    if (names.size() > kNamed) shown += fmt::format(", and {} more", names.size() - kNamed);
    out << fmt::format("not the application's I/O, left out: {} {}: {}\n", names.size(), what,
                       shown);
  }
}

void print_text(const Advice& a, const Evidence& ev, std::ostream& out) {
  if (a.findings.empty())
    out << "No findings: no rule was triggered (" << a.rules.size() << " rules).\n";
  for (auto& f : a.findings) {
    out << fmt::format("[{}] {}\n  evidence: {}\n", level_name(f.level), f.title, f.evidence);
    for (auto& w : f.where) out << "  where:    " << w << "\n";
    out << "  do:       " << f.advice << "\n\n";
  }
  for (auto& u : a.unobserved) out << fmt::format("not observed: {}: {}\n", u.rule, u.reason);
  print_left_out(a, out);
  if (ev.lost_total() > 0) out << "Events were lost: every finding is a lower bound.\n";
}

}  // namespace

void advise_command(const AdviseOptions& o) {
  Thresholds t;
  if (!o.config.empty()) t.load(o.config);
  t.all = o.all;
  Evidence ev = collect_evidence(o.trace, evidence_options(t));
  Advice a = advise(ev, t);
  if (o.json) {
    std::cout << advice_json(a, ev, t).dump(2) << "\n";
  } else {
    print_text(a, ev, std::cout);
  }
  std::cout.flush();
}

}  // namespace ezio::analysis
