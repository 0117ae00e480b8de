// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Where EZTrace and eziotrace's preload helper are installed.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace ezio::converters {

// An EZTrace library (libeztrace-lib.so, libeztrace-<module>.so) in the directories the `eztrace`
// launcher searches: EZTRACE_LIBRARY_PATH (':'-separated), then its compiled-in directories.
std::optional<std::filesystem::path> find_eztrace_library(const std::string& file);

// The EZTrace modules installed there, sorted.
std::vector<std::string> available_eztrace_modules();

// Where the preload helper library is: next to the running executable.
std::filesystem::path preload_helper_path();

}  // namespace ezio::converters
