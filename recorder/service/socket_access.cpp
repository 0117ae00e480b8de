// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/service/socket_access.h"

#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <vector>

#include "common/error.h"
#include "common/log.h"
#include "recorder/service/socket.h"

namespace fs = std::filesystem;

namespace ezio::recorder::service {
namespace {

std::string group_name(gid_t gid) {
  group* g = getgrgid(gid);
  return g ? g->gr_name : fmt::format("gid {}", gid);
}

std::string owner_name(uid_t uid) {
  passwd* pw = getpwuid(uid);
  return pw ? pw->pw_name : fmt::format("uid {}", uid);
}

// "mode 0700, owner root:root", for the messages.
std::string described(const struct stat& st) {
  return fmt::format("mode {:04o}, owner {}:{}", st.st_mode & 07777, owner_name(st.st_uid),
                     group_name(st.st_gid));
}

// Whether a member of `group` other than the owner may search a directory of this mode.
bool group_may_search(const struct stat& st, gid_t group) {
  return (st.st_mode & S_IXOTH) || ((st.st_mode & S_IXGRP) && st.st_gid == group);
}

// The directories from / down to dir, outermost first.
std::vector<fs::path> directories_down_to(const fs::path& dir) {
  std::vector<fs::path> dirs;
  for (fs::path p = fs::absolute(dir).lexically_normal(); !p.empty(); p = p.parent_path()) {
    if (!p.has_filename()) p = p.parent_path();  // a trailing separator
    dirs.push_back(p);
    if (p == p.root_path()) break;
  }
  std::reverse(dirs.begin(), dirs.end());
  return dirs;
}

bool in_group(gid_t gid) {
  if (getegid() == gid) return true;
  int n = getgroups(0, nullptr);
  std::vector<gid_t> groups(n > 0 ? n : 0);
  n = getgroups(int(groups.size()), groups.data());
  return n > 0 && std::find(groups.begin(), groups.begin() + n, gid) != groups.begin() + n;
}

}  // namespace

void prepare_socket_directory(const fs::path& dir, gid_t group) {
  if (dir.empty()) return;
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    fail("cannot create {}: {}", dir.string(), errno_text(errno));
  }
  struct stat st {};
  if (lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    fail("{} is not a directory: eziotraced cannot serve a socket in it", dir.string());
  }
  if (dir == fs::path(kDefaultSocket).parent_path() && st.st_uid == 0 && (st.st_mode & 0022) == 0 &&
      (st.st_mode & 0755) != 0755) {
    if (chmod(dir.c_str(), (st.st_mode & 07777) | 0755) != 0) {
      fail("cannot open {} to the group's members ({}): {}", dir.string(), described(st),
           errno_text(errno));
    }
    spdlog::info("{} was {}: made 0755, so that group {} reaches the socket", dir.string(),
                 described(st), group_name(group));
  }
  for (const fs::path& d : directories_down_to(dir)) {
    if (stat(d.c_str(), &st) != 0) fail("cannot examine {}: {}", d.string(), errno_text(errno));
    if (!group_may_search(st, group)) {
      fail(
          "the members of group {} could not reach a socket in {}: {} is {} (they need search "
          "permission, x, on every directory above the socket). Give it (chmod o+x {}) or "
          "choose another --socket",
          group_name(group), dir.string(), d.string(), described(st), d.string());
    }
  }
}

std::string why_socket_denied(const fs::path& path) {
  for (const fs::path& d : directories_down_to(path.parent_path())) {
    if (access(d.c_str(), X_OK) == 0) continue;
    struct stat st {};
    std::string how = stat(d.c_str(), &st) == 0 ? described(st) : errno_text(errno);
    group* g = getgrnam(kDefaultGroup);
    std::string also = g && !in_group(g->gr_gid)
                           ? fmt::format(" (besides, you are not in group {})", kDefaultGroup)
                           : "";
    return fmt::format(
        "cannot reach eziotraced's socket {}: the directory {} ({}) does not let you through{}. "
        "Every directory above the socket must be searchable by the members of group {} (the "
        "service makes /run/eziotrace 0755): ask your administrator to fix it (chmod 755 {}) "
        "or to restart eziotraced",
        path.string(), d.string(), how, also, kDefaultGroup, d.string());
  }
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    return fmt::format("cannot reach eziotraced's socket {}: {}", path.string(), errno_text(errno));
  }
  if (geteuid() != st.st_uid && !in_group(st.st_gid)) {
    return fmt::format(
        "you are not in group {}: recording through eziotraced ({}) is for root and the members "
        "of that group. Ask your administrator to add you (usermod -aG {} {}), then log in "
        "again (a process keeps the groups of its login)",
        group_name(st.st_gid), path.string(), group_name(st.st_gid), owner_name(geteuid()));
  }
  return fmt::format(
      "cannot connect to eziotraced's socket {} ({}): permission denied although you are in its "
      "group; it must be writable by its group (0660)",
      path.string(), described(st));
}

}  // namespace ezio::recorder::service
