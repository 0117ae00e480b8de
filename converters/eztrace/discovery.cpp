// SPDX-License-Identifier: GPL-2.0-only
#include "converters/eztrace/discovery.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "common/error.h"

namespace ezio::converters {
namespace {

// Our own modules (docs/mpiio.md): eztrace/ beside the eziotrace binary (build tree), or
// lib/eziotrace/eztrace/ of the install prefix, the MPI-specific ones in eztrace/<mpi>/ (first,
// when the run's MPI is known; all of them, to list what exists). After EZTRACE_LIBRARY_PATH
// (the user's choice), before EZTrace's own directory.
std::vector<std::filesystem::path> own_module_dirs(const std::vector<std::string>& mpis) {
  std::error_code ec;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  std::vector<std::filesystem::path> out;
  for (auto base : {exe.parent_path() / "eztrace",
                    (exe.parent_path() / "../lib/eziotrace/eztrace").lexically_normal()}) {
    for (const auto& mpi : mpis) out.push_back(base / mpi);
    out.push_back(base);
  }
  return out;
}

std::vector<std::filesystem::path> eztrace_library_dirs(const std::vector<std::string>& mpis) {
  std::vector<std::filesystem::path> dirs;
  if (const char* p = std::getenv("EZTRACE_LIBRARY_PATH")) {
    std::stringstream ss(p);
    std::string d;
    while (std::getline(ss, d, ':')) {
      if (!d.empty()) dirs.emplace_back(d);
    }
  }
  for (auto& d : own_module_dirs(mpis)) dirs.push_back(std::move(d));
  dirs.emplace_back("/usr/lib/x86_64-linux-gnu");
  dirs.emplace_back("/usr/local/lib");
  return dirs;
}

}  // namespace

std::optional<std::filesystem::path> find_eztrace_library(const std::string& file,
                                                          const std::string& mpi) {
  std::vector<std::string> mpis;
  if (!mpi.empty()) mpis.push_back(mpi);
  for (const auto& d : eztrace_library_dirs(mpis)) {
    if (std::filesystem::exists(d / file)) return d / file;
  }
  return std::nullopt;
}

std::vector<std::string> available_eztrace_modules() {
  std::vector<std::string> out;
  for (const auto& d : eztrace_library_dirs(module_mpis())) {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(d, ec)) {
      std::string f = e.path().filename().string();
      if (f.rfind("libeztrace-", 0) != 0 || e.path().extension() != ".so") continue;
      std::string m = f.substr(11, f.size() - 14);
      if (m != "lib" && m != "core" && m != "instrumentation") out.push_back(m);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::filesystem::path preload_helper_path() {
  // Tests and unusual installs name the helper explicitly.
  if (const char* p = std::getenv("EZIOTRACE_PRELOAD_HELPER"); p && *p) return p;
  std::error_code ec;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  for (const auto& p : {exe.parent_path() / "libeziotrace-preload.so",
                        exe.parent_path() / "../lib/eziotrace/libeziotrace-preload.so"}) {
    if (std::filesystem::exists(p)) return p.lexically_normal();
  }
  fail("the EZTrace alignment helper libeziotrace-preload.so is not next to {} (broken install?)",
       exe.string());
}

}  // namespace ezio::converters
