// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The shared libraries an ELF object needs, and where the dynamic loader would find them.
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace ezio::converters {

struct ElfDynamic {
  bool elf = false;                  // a 64-bit ELF object of this machine's class
  std::vector<std::string> needed;   // DT_NEEDED, in order
  std::vector<std::string> runpath;  // DT_RUNPATH, else DT_RPATH, $ORIGIN expanded
};

ElfDynamic read_elf_dynamic(const std::filesystem::path& file);

// Visits `file`'s DT_NEEDED closure breadth first: visit(name, needed_by) for each library name
// once; stops when visit returns true. Libraries are looked up in ld_library_path (':'-
// separated), the needing object's run path, /etc/ld.so.conf's directories and the defaults.
void visit_needed(
    const std::filesystem::path& file, const std::string& ld_library_path,
    const std::function<bool(const std::string&, const std::filesystem::path&)>& visit);

}  // namespace ezio::converters
