// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Where a command word leads, as execvp would find it.
#include <filesystem>
#include <string>

namespace ezio {

// word with a '/' as it is, else the first executable <dir>/word of the ':'-separated `path`
// (an empty entry is the current directory); canonical (symlinks followed), empty when none.
std::filesystem::path find_program(const std::string& word, const std::string& path);

}  // namespace ezio
