// SPDX-License-Identifier: GPL-2.0-only
#include "converters/clock_reference.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "recorder/core/clock_sync.h"

namespace ezio::converters {
namespace {

constexpr unsigned kRounds = 200;

nlohmann::json to_json(const recorder::ClockOffset& o) {
  return {{"offset_ns", o.offset_ns},   {"error_ns", o.error_ns},           {"at_ns", o.at_ns},
          {"rtt_min_ns", o.rtt_min_ns}, {"rtt_median_ns", o.rtt_median_ns}, {"rounds", o.rounds}};
}

std::string host_name() {
  char name[256] = "";
  gethostname(name, sizeof name - 1);
  return name;
}

}  // namespace

std::pair<std::string, uint16_t> parse_clock_ref(const std::string& ref) {
  std::string host = ref;
  unsigned long port = 7471;
  if (auto colon = ref.rfind(':'); colon != std::string::npos) {
    host = ref.substr(0, colon);
    const std::string p = ref.substr(colon + 1);
    char* end = nullptr;
    port = std::strtoul(p.c_str(), &end, 10);
    if (p.empty() || *end != '\0' || port == 0 || port > 65535)
      fail("--clock-ref {}: the port must be a number 1..65535", ref);
  }
  if (host.empty()) fail("--clock-ref {}: no host (HOST[:PORT])", ref);
  return {host, uint16_t(port)};
}

recorder::RecordExtras with_clock_reference(recorder::RecordExtras extras, const std::string& ref) {
  const auto [host, port] = parse_clock_ref(ref);
  auto start = std::make_shared<recorder::ClockOffset>();
  auto inner_prepare = extras.prepare;
  extras.prepare = [inner_prepare, start, host, port](const std::filesystem::path& archive,
                                                      std::vector<std::string>& env) {
    if (inner_prepare) inner_prepare(archive, env);
    *start = recorder::measure_clock(host, port, kRounds);
  };
  auto inner_finish = extras.finish;
  extras.finish = [inner_finish, start, host, port](const std::filesystem::path& staged) {
    if (inner_finish) inner_finish(staged);
    // The recording is done: a reference gone by now costs the drift correction, never the archive.
    nlohmann::json j = {{"reference", host}, {"host", host_name()}, {"start", to_json(*start)}};
    try {
      recorder::ClockMap map{*start, recorder::measure_clock(host, port, kRounds, 5)};
      j["end"] = to_json(map.end);
      j["drift_ppm"] = map.drift_ppm();
      j["error_ns"] = map.error_ns();
    } catch (const Error& e) {
      spdlog::warn("clock offset to {} at the end: {}; only the start's is kept", host, e.what());
      j["end"] = nullptr;
      j["end_missing"] = e.what();
      j["error_ns"] = start->error_ns;
    }
    std::ofstream out(staged / kClockFileName);
    out << j.dump(1) << "\n";
    if (!out) fail("cannot write {}", (staged / kClockFileName).string());
    spdlog::info("clock offset to {}: {} ns +- {} ns ({})", host, start->offset_ns,
                 j["error_ns"].get<int64_t>(), kClockFileName);
  };
  return extras;
}

}  // namespace ezio::converters
