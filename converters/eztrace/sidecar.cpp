// SPDX-License-Identifier: GPL-2.0-only
#include "converters/eztrace/sidecar.h"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/error.h"

namespace ezio::converters {

std::filesystem::path Sidecar::trace_dir() const {
  std::filesystem::path base = trace_dir_env.empty() ? cwd : std::filesystem::path(trace_dir_env);
  if (base.is_relative()) base = cwd / base;
  return (base / (program + "_trace")).lexically_normal();
}

Sidecar parse_sidecar(const std::string& line) {
  auto j = nlohmann::json::parse(line);
  Sidecar s;
  s.pid = j.at("pid").get<uint32_t>();
  s.ppid = j.at("ppid").get<uint32_t>();
  s.program = j.at("program").get<std::string>();
  s.cwd = j.at("cwd").get<std::string>();
  s.trace_dir_env = j.value("trace_dir_env", "");
  s.sidecar_dir = j.value("sidecar_dir", "");
  s.first_timestamp = j.at("first_timestamp").get<uint64_t>();
  s.ctor_ns = j.value("ctor_ns", uint64_t{0});
  s.ctor_before_eztrace = j.value("ctor_before_eztrace", false);
  s.main_ns = j.value("main_ns", uint64_t{0});
  s.finalize_ns = j.value("finalize_ns", uint64_t{0});
  s.exit_ns = j.value("exit_ns", uint64_t{0});
  s.exited = j.contains("threads");
  if (!s.exited) return s;
  s.clock = j.value("clock", std::string("CLOCK_MONOTONIC"));
  if (s.clock == "MPI_Wtime") {
    if (!j.contains("clock_offset_ns")) {
      fail(
          "{} [{}] stamped its EZTrace events with MPI_Wtime, but the helper could not measure "
          "that clock against CLOCK_MONOTONIC (EZTrace's atexit callbacks did not run before "
          "MPI_Finalize): its events cannot be placed",
          s.program, s.pid);
    }
    s.clock_offset_ns = j.at("clock_offset_ns").get<int64_t>();
    s.clock_offset_error_ns = j.value("clock_offset_error_ns", uint64_t{0});
  } else if (s.clock != "CLOCK_MONOTONIC") {
    fail("{} [{}]: unknown EZTrace clock '{}' in the alignment data", s.program, s.pid, s.clock);
  }
  for (const auto& t : j.at("threads")) {
    s.threads.push_back({t.at("tid").get<uint32_t>(), t.at("rank").get<int>(),
                         t.at("location").get<uint64_t>(), t.value("name", "")});
  }
  return s;
}

std::vector<Sidecar> read_sidecars(const std::filesystem::path& dir) {
  std::vector<Sidecar> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() != ".json") continue;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    try {
      out.push_back(parse_sidecar(text.str()));
    } catch (const nlohmann::json::exception& e) {
      fail("malformed alignment file {}: {}", entry.path().string(), e.what());
    }
  }
  if (ec) fail("cannot read the alignment directory {}: {}", dir.string(), ec.message());
  std::sort(out.begin(), out.end(),
            [](const Sidecar& a, const Sidecar& b) { return a.ctor_ns < b.ctor_ns; });
  return out;
}

}  // namespace ezio::converters
