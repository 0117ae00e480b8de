// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Helpers shared by the analyzer tests: fresh temporary directories and reports as JSON.
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "analysis/analyzers/table.h"

namespace ezio::test {

// A new empty directory, removed when the object goes out of scope.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "ezio-analysis-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& s) const { return path_ / s; }

 private:
  std::filesystem::path path_;
};

inline nlohmann::json as_json(const analysis::Report& r) {
  std::ostringstream s;
  analysis::print(r, analysis::Format::kJson, s);
  return nlohmann::json::parse(s.str());
}

// The row of `table` whose fields match all of `key`.
inline nlohmann::json find_row(const nlohmann::json& table, const nlohmann::json& key) {
  for (auto& row : table) {
    bool match = true;
    for (auto& [k, v] : key.items()) {
      if (!row.contains(k) || row[k] != v) match = false;
    }
    if (match) return row;
  }
  return nullptr;
}

}  // namespace ezio::test
