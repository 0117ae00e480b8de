// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Whose I/O a file is: the application's own, or the start-up around it (the dynamic loader's
// libraries and cache, the C library's locale files, /etc, /proc and /sys, EZTrace's and
// eziotrace's own start-up) and the descriptors the process inherited from whoever launched it (a
// terminal, a pipe, stdout opened before tracing). The analyzers speak of the application's files
// only; the others are named as such (docs/analysis.md, "Start-up and inherited files"). One
// function, so that every analyzer (and the MPI launchers' files later) classify alike.
#include <optional>
#include <string_view>

namespace ezio::analysis {

enum class FileOrigin {
  kApplication,
  kSystem,     // start-up and system files: libraries, loader cache, locale, /etc, /proc, /sys
  kInherited,  // a descriptor opened before tracing: a terminal, a pipe, a socket
  kLauncher,   // used only by an MPI launcher's processes (process_role.h; never file_origin()'s)
};

// `path` as the model names it (Definitions::handle_path); `written`: the process wrote to it (a
// system file written, e.g. a configuration the application updates, is the application's).
FileOrigin file_origin(std::string_view path, bool written);

// "application", "system", "inherited": the JSON/CSV spelling.
std::string_view origin_key(FileOrigin o);

}  // namespace ezio::analysis
