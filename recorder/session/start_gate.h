// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Whether a command's program can be held at the start gate of eziotrace's preload helper
// (converters/eztrace/preload): started at once, its own code (constructors, main) waiting until
// the kernel side filters on it, so that the BPF programs load while the loader and EZTrace start
// up. The gate is in the helper's __libc_start_main, so the program must load the helper: a
// dynamically linked program of this machine's architecture that starts through glibc's
// __libc_start_main, runs no code of its own before it (no DT_PREINIT_ARRAY), and gains no
// privileges at its exec (setuid, setgid, file capabilities: the loader then ignores LD_PRELOAD).
// A script's interpreter is checked instead of the script.
#include <optional>
#include <string>
#include <vector>

namespace ezio::recorder {

// The program execvp would run for `command`: a path as it is, a name looked up in PATH.
std::optional<std::string> resolve_command(const std::string& command);

// "" when the program `command` names (a path, or looked up in PATH as execvp does) can be held at
// the gate; otherwise why not ("statically linked", "setuid", ...), for the log.
std::string why_not_gated(const std::string& command);

// "" when the loader will load `helper` into a program started with `env` ("NAME=value"): its
// LD_PRELOAD names it, and it is a readable file whose path has no space or colon (the loader
// splits LD_PRELOAD there, and skips a file it cannot open with a message only); else why not.
std::string why_helper_not_loaded(const std::vector<std::string>& env, const std::string& helper);

}  // namespace ezio::recorder
