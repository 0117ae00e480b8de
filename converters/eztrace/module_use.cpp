// SPDX-License-Identifier: GPL-2.0-only
#include "converters/eztrace/module_use.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>

namespace ezio::converters {
namespace {

struct Wrapped {
  const char* module;
  const char* library;
};
// Modules that note their use; EZTrace's own do not.
constexpr std::array kWrapped = {Wrapped{"hdf5", "libhdf5 (HDF5)"}};

bool noted(const std::filesystem::path& dir, const std::string& module) {
  std::string suffix = "." + module + "-used";
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (e.path().filename().string().ends_with(suffix)) return true;
  }
  return false;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> unused_modules(
    const std::vector<std::string>& modules, const std::filesystem::path& sidecar_dir) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& w : kWrapped) {
    if (std::find(modules.begin(), modules.end(), w.module) == modules.end()) continue;
    if (!noted(sidecar_dir, w.module)) out.emplace_back(w.module, w.library);
  }
  return out;
}

void warn_unused_modules(const std::vector<std::string>& modules,
                         const std::filesystem::path& sidecar_dir) {
  for (const auto& [module, library] : unused_modules(modules, sidecar_dir)) {
    spdlog::warn(
        "the {} module was asked for, but no process of the program loaded {}: nothing of it is "
        "recorded; the other modules' calls are",
        module, library);
  }
}

}  // namespace ezio::converters
