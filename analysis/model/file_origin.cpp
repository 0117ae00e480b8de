// SPDX-License-Identifier: GPL-2.0-only
#include "analysis/model/file_origin.h"

#include <array>

namespace ezio::analysis {
namespace {

bool starts_with_any(std::string_view s, std::initializer_list<std::string_view> prefixes) {
  for (std::string_view p : prefixes) {
    if (s.starts_with(p)) return true;
  }
  return false;
}

// A shared object, by name: "libc.so.6", "libeztrace-lib.so", "ld-linux-x86-64.so.2", wherever it
// is installed (EZTrace's prefix, eziotrace's build/bin).
bool shared_object(std::string_view path) {
  std::string_view base = path.substr(path.rfind('/') + 1);
  size_t so = base.find(".so");
  if (so == std::string_view::npos) return false;
  std::string_view rest = base.substr(so + 3);  // "", or a version ".6", ".1.2.3"
  for (char ch : rest) {
    if (ch != '.' && (ch < '0' || ch > '9')) return false;
  }
  return true;
}

}  // namespace

FileOrigin file_origin(std::string_view path, bool written) {
  // The recorder's name for a descriptor it never saw opened (recorder/archive/fd_table.cpp), and
  // EZTrace's names of the standard streams.
  if (path.starts_with("<fd ") || path == "stdin" || path == "stdout" || path == "stderr")
    return FileOrigin::kInherited;
  if (starts_with_any(path, {"/dev/pts/", "/dev/tty", "/dev/console", "pipe:", "socket:"}))
    return FileOrigin::kInherited;
  // Pseudo files: not on a storage device, whatever the process does with them.
  if (starts_with_any(path, {"/proc/", "/sys/", "anon_inode:"}) || path == "/proc" ||
      path == "/sys" || path == "/dev/urandom" || path == "/dev/random")
    return FileOrigin::kSystem;
  // MPI's shared-memory segments between the ranks of a node (MPICH's, Open MPI's vader/sm,
  // PSM2's): communication, not data, though the ranks map and write them.
  if (starts_with_any(path, {"/dev/shm/mpich_", "/dev/shm/vader_segment", "/dev/shm/sm_segment",
                             "/dev/shm/ompi", "/dev/shm/psm2", "/dev/shm/shm-col-space"}))
    return FileOrigin::kSystem;
  if (written) return FileOrigin::kApplication;
  if (shared_object(path)) return FileOrigin::kSystem;
  if (starts_with_any(path, {"/usr/", "/lib/", "/lib32/", "/lib64/", "/libx32/", "/etc/",
                             "/var/lib/locale", "/var/cache/ldconfig"}))
    return FileOrigin::kSystem;
  return FileOrigin::kApplication;
}

std::string_view origin_key(FileOrigin o) {
  static constexpr std::array<std::string_view, 4> keys = {"application", "system", "inherited",
                                                           "launcher"};
  return keys[static_cast<size_t>(o)];
}

}  // namespace ezio::analysis
