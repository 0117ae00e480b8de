// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Our EZTrace modules that wrap a library the program may not load (docs/hdf5.md, "Bad input").
#include <filesystem>
#include <string>
#include <vector>

namespace ezio::converters {

// The modules asked for whose library no process of the run loaded, each with that library:
// {"hdf5", "libhdf5 (HDF5)"}. A module notes its use as `<pid>.<module>-used` in the alignment
// directory when the process ends.
std::vector<std::pair<std::string, std::string>> unused_modules(
    const std::vector<std::string>& modules, const std::filesystem::path& sidecar_dir);

// Warns once per such module: the rest of the run is recorded.
void warn_unused_modules(const std::vector<std::string>& modules,
                         const std::filesystem::path& sidecar_dir);

}  // namespace ezio::converters
