// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Where EZTrace and eziotrace's preload helper are installed.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace ezio::converters {

// An EZTrace library (libeztrace-lib.so, libeztrace-<module>.so) in the directories the `eztrace`
// launcher searches: EZTRACE_LIBRARY_PATH (':'-separated), then our own modules' directories, then
// its compiled-in directories. mpi ("mpich", "openmpi" or ""): the MPI of the run, whose build of
// our MPI-specific modules (eztrace/<mpi>/) is taken before the MPI-independent ones.
std::optional<std::filesystem::path> find_eztrace_library(const std::string& file,
                                                          const std::string& mpi = "");

// The EZTrace modules installed there (for any MPI), sorted.
std::vector<std::string> available_eztrace_modules();

// The MPIs our MPI-specific modules are built for, as directory names.
inline const std::vector<std::string>& module_mpis() {
  static const std::vector<std::string> mpis = {"mpich", "openmpi"};
  return mpis;
}

// Where the preload helper library is: next to the running executable.
std::filesystem::path preload_helper_path();

}  // namespace ezio::converters
