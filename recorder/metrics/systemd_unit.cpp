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

namespace {

// The unit a path is in and the slice holding it (systemd's cg_path_get_unit and
// cg_path_get_slice); `rest` is left with what is below the unit.
SystemdPlace unit_of(std::string_view& rest) {
  SystemdPlace out;
  std::string_view slice;
  while (!rest.empty()) {
    size_t start = rest.find_first_not_of('/');
    if (start == std::string_view::npos) break;
    rest.remove_prefix(start);
    size_t end = rest.find('/');
    std::string_view name = unescaped(rest.substr(0, end));
    rest.remove_prefix(end == std::string_view::npos ? rest.size() : end);
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

// A user's manager (user@1000.service), below which the user's own units are read as systemd
// reads the whole path.
bool is_user_manager(std::string_view unit) {
  return unit.starts_with("user@") && is_unit_name(unit, ".service");
}

}  // namespace

SystemdPlace systemd_place(std::string_view path) {
  SystemdPlace out = unit_of(path);
  if (is_user_manager(out.unit)) out.user_unit = unit_of(path).unit;
  return out;
}

}  // namespace ezio::recorder::metrics
