// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Which eziotrace this is: the project's version (CMakeLists.txt) and the git commit the build
// was configured from. `--version` prints it; every archive eziotrace writes carries it
// (EZIOTRACE::VERSION), and so does every analyzer's JSON.
#include <string>
#include <string_view>

namespace ezio {

// "0.1.0".
std::string_view version();
// The short hash of the git commit at configure time; "" when the source was no git checkout.
std::string_view git_commit();
// "0.1.0 (git 1a2b3c4)", or "0.1.0" without a commit.
std::string version_string();
// "<program> <version_string()>": the line `--version` prints.
std::string version_line(std::string_view program);

}  // namespace ezio
