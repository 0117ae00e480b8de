// SPDX-License-Identifier: GPL-2.0-only
// The clock file a synthetic host part carries: measured against node1, offset 0, at its start
// (0 ns) and end (5000 ns), each bound error_ns; shared by the merge-hosts tests of one host's
// several parts.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace ezio::test {

inline void write_host_clock_file(const std::filesystem::path& dir, const std::string& host,
                                  int64_t error_ns) {
  auto offset = [error_ns](int64_t at) {
    return nlohmann::json{{"offset_ns", 0}, {"error_ns", error_ns}, {"at_ns", at}, {"rounds", 1}};
  };
  nlohmann::json j = {
      {"reference", "node1"}, {"host", host}, {"start", offset(0)}, {"end", offset(5000)}};
  std::ofstream(dir / "eziotrace-clock.json") << j.dump(1);
}

}  // namespace ezio::test
