// SPDX-License-Identifier: GPL-2.0-only
#include "common/program_path.h"

#include <unistd.h>

#include <sstream>

namespace ezio {

std::filesystem::path find_program(const std::string& word, const std::string& path) {
  std::error_code ec;
  if (word.find('/') != std::string::npos) return std::filesystem::canonical(word, ec);
  std::stringstream dirs(path);
  for (std::string dir; std::getline(dirs, dir, ':');) {
    std::filesystem::path p = std::filesystem::path(dir.empty() ? "." : dir) / word;
    if (access(p.c_str(), X_OK) == 0) return std::filesystem::canonical(p, ec);
  }
  return {};
}

}  // namespace ezio
