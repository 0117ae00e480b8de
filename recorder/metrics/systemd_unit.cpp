// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/metrics/systemd_unit.h"

#include <array>
#include <cctype>

namespace ezio::recorder::metrics {
namespace {

// A name as systemd accepts it for a unit ending in `suffix`: at most 255 characters of
// [A-Za-z0-9:_.\\@-] with something before the suffix.
bool is_unit_name(std::string_view name, std::string_view suffix) {
  if (name.size() <= suffix.size() || name.size() > 255 || !name.ends_with(suffix)) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) &&
        std::string_view(":_.\\@-").find(c) == std::string_view::npos) {
      return false;
    }
  }
  return name.front() != '@' && name[name.size() - suffix.size() - 1] != '@';  // no template
}

bool runs_processes(std::string_view name) {
  static constexpr std::array<std::string_view, 5> kinds = {".service", ".scope", ".socket",
                                                            ".mount", ".swap"};
  for (std::string_view k : kinds) {
    if (is_unit_name(name, k)) return true;
  }
  return false;
}

// systemd's cg_unescape: a leading '_' added to a name that would clash with cgroupfs' files.
std::string_view unescaped(std::string_view name) {
  return name.starts_with('_') ? name.substr(1) : name;
}

}  // namespace

SystemdPlace systemd_place(std::string_view path) {
  SystemdPlace out;
  std::string_view slice;
  while (!path.empty()) {
    size_t start = path.find_first_not_of('/');
    if (start == std::string_view::npos) break;
    path.remove_prefix(start);
    size_t end = path.find('/');
    std::string_view name = unescaped(path.substr(0, end));
    path.remove_prefix(end == std::string_view::npos ? path.size() : end);
    if (is_unit_name(name, ".slice")) {
      slice = name;
      continue;
    }
    if (runs_processes(name)) {
      out.unit = name;
      out.slice = slice.empty() ? "-.slice" : std::string(slice);
    }
    break;
  }
  return out;
}

}  // namespace ezio::recorder::metrics
