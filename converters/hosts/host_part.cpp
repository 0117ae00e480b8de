// SPDX-License-Identifier: GPL-2.0-only
#include "converters/hosts/host_part.h"

#include <fmt/format.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/otf2/reader.h"
#include "converters/clock_reference.h"

namespace ezio::converters {
namespace {

recorder::ClockOffset offset_from(const nlohmann::json& j) {
  recorder::ClockOffset o;
  o.offset_ns = j.at("offset_ns").get<int64_t>();
  o.error_ns = j.at("error_ns").get<int64_t>();
  o.at_ns = j.at("at_ns").get<int64_t>();
  o.rounds = j.value("rounds", 0u);
  return o;
}

// The archive's anchor and host name; throws ezio::Error when it is no readable archive.
void read_archive_host(HostPart& p) {
  otf2::ArchiveReader reader(p.given);
  p.anchor = reader.anchor();
  const otf2::Definitions& d = reader.defs();
  if (!d.nodes.empty()) p.host = d.str(d.nodes.begin()->second.name);
  // The clock files are in nanoseconds of CLOCK_MONOTONIC, as eziotrace's archives' ticks.
  if (d.resolution != 1'000'000'000) {
    fail("its timer resolution is {} ticks/s, not eziotrace's nanoseconds", d.resolution);
  }
}

void read_clock_file(HostPart& p) {
  const std::filesystem::path file = p.anchor.parent_path() / kClockFileName;
  if (!std::filesystem::exists(file)) return;
  std::ifstream in(file);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
    p.reference = j.at("reference").get<std::string>();
    if (j.contains("host")) p.host = j["host"].get<std::string>();
    recorder::ClockMap map{offset_from(j.at("start")), {}};
    map.end = map.start;  // one measurement: a constant shift
    if (j.contains("end") && !j["end"].is_null()) map.end = offset_from(j["end"]);
    if (j.contains("end_missing")) p.end_missing = j["end_missing"].get<std::string>();
    p.clock = map;
  } catch (const nlohmann::json::exception& e) {
    p.problem = fmt::format("{} cannot be read: {}", file.string(), e.what());
  }
}

// One reference for all: the one most parts name.
void check_references(std::vector<HostPart>& parts) {
  std::map<std::string, size_t> votes;
  for (const auto& p : parts)
    if (p.problem.empty() && !p.reference.empty()) ++votes[p.reference];
  std::string reference;
  size_t best = 0;
  for (const auto& [r, n] : votes)
    if (n > best) reference = r, best = n;
  for (auto& p : parts) {
    if (!p.problem.empty()) continue;
    if (p.reference.empty() && reference.empty()) {
      p.problem = fmt::format("no {} beside the archive, and no other part names a reference",
                              kClockFileName);
    } else if (p.reference.empty() && p.host != reference) {
      p.problem = fmt::format("no {} beside the archive, and its host {} is not the reference {}",
                              kClockFileName, p.host, reference);
    } else if (!p.reference.empty() && p.reference != reference) {
      p.problem = fmt::format("its clock was measured against {}, the other parts' against {}",
                              p.reference, reference);
    }
    p.reference = reference;
  }
}

}  // namespace

std::vector<HostPart> load_host_parts(const std::vector<std::filesystem::path>& given) {
  std::vector<HostPart> parts;
  for (const auto& g : given) {
    HostPart& p = parts.emplace_back();
    p.given = g;
    try {
      if (!std::filesystem::exists(g)) fail("no such file or directory");
      read_archive_host(p);
      read_clock_file(p);
      if (p.host.empty()) p.problem = "the archive names no host (no system tree node)";
    } catch (const Error& e) {
      p.problem = e.what();
    }
  }
  check_references(parts);
  return parts;
}

}  // namespace ezio::converters
