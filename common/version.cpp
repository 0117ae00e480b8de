// SPDX-License-Identifier: GPL-2.0-only
#include "common/version.h"

// Generated at configure time (common/CMakeLists.txt): only this file is rebuilt when the commit
// changes.
#include "common/version_info.h"

namespace ezio {

std::string_view version() { return EZIO_VERSION; }

std::string_view git_commit() { return EZIO_GIT_COMMIT; }

std::string version_string() {
  std::string v(version());
  if (!git_commit().empty()) v += " (git " + std::string(git_commit()) + ")";
  return v;
}

std::string version_line(std::string_view program) {
  return std::string(program) + " " + version_string();
}

}  // namespace ezio
