// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/service/peer.h"

#include <grp.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <charconv>
#include <fstream>
#include <sstream>
#include <vector>

#include "common/error.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77  // Linux 6.5
#endif

namespace ezio::recorder::service {
namespace {

// The value of "Key:" in a /proc status-like file, or "" when absent.
std::string proc_field(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, key.size() + 1, key + ":") == 0) {
      size_t at = line.find_first_not_of(" \t", key.size() + 1);
      return at == std::string::npos ? "" : line.substr(at);
    }
  }
  return "";
}

std::optional<long> to_long(const std::string& s) {
  long v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || s.empty()) return std::nullopt;
  (void)p;
  return v;
}

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {
  }, sb{};
  return stat(a.c_str(), &sa) == 0 && stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

}  // namespace

Peer peer_of(int sock) {
  ucred cred{};
  socklen_t len = sizeof(cred);
  if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
    fail("cannot read the peer's credentials: {}", errno_text(errno));
  }
  Peer p;
  p.pid = cred.pid;
  p.uid = cred.uid;
  p.gid = cred.gid;
  int fd = -1;
  len = sizeof(fd);
  if (getsockopt(sock, SOL_SOCKET, SO_PEERPIDFD, &fd, &len) == 0) p.pidfd = UniqueFd(fd);
  return p;
}

std::optional<gid_t> group_id(const std::string& name) {
  group* g = getgrnam(name.c_str());
  if (!g) return std::nullopt;
  return g->gr_gid;
}

std::string user_name(uid_t uid) {
  passwd* pw = getpwuid(uid);
  return pw ? pw->pw_name : fmt::format("uid {}", uid);
}

bool may_use_service(uid_t uid, gid_t group) {
  if (uid == 0) return true;
  passwd* pw = getpwuid(uid);
  if (!pw) return false;
  int n = 64;
  std::vector<gid_t> groups(n);
  while (getgrouplist(pw->pw_name, pw->pw_gid, groups.data(), &n) < 0) groups.resize(n);
  groups.resize(n);
  for (gid_t g : groups) {
    if (g == group) return true;
  }
  return false;
}

std::optional<pid_t> pidfd_pid(int fd) {
  std::string self = fmt::format("/proc/self/fd/{}", fd);
  char target[64] = {};
  ssize_t n = readlink(self.c_str(), target, sizeof(target) - 1);
  if (n <= 0 || std::string(target, n) != "anon_inode:[pidfd]") return std::nullopt;
  auto pid = to_long(proc_field(fmt::format("/proc/self/fdinfo/{}", fd), "Pid"));
  if (!pid || *pid <= 0) return std::nullopt;
  return pid_t(*pid);
}

std::string check_child(const Peer& peer, pid_t claimed_pid, int pidfd) {
  std::optional<pid_t> pid = pidfd_pid(pidfd);
  if (!pid) return "the fd sent is not a pidfd of a live process";
  if (*pid != claimed_pid) {
    return fmt::format("the pidfd refers to process {}, not {}", *pid, claimed_pid);
  }
  std::string status = fmt::format("/proc/{}/status", *pid);
  if (to_long(proc_field(status, "PPid")) != long(peer.pid)) {
    return fmt::format("process {} is not a child of the requesting process {}", *pid, peer.pid);
  }
  std::istringstream uids(proc_field(status, "Uid"));
  int seen = 0;
  for (long u; uids >> u; ++seen) {
    if (u != long(peer.uid)) {
      return fmt::format("process {} runs as uid {}, not as the requesting user (uid {})", *pid, u,
                         peer.uid);
    }
  }
  if (seen != 4) return fmt::format("cannot read the identity of process {}", *pid);
  if (!same_file(fmt::format("/proc/{}/exe", *pid), fmt::format("/proc/{}/exe", peer.pid))) {
    return fmt::format(
        "process {} has already run a program of its own (exec): only a child that waits "
        "before its exec can be traced",
        *pid);
  }
  // The checks read /proc by pid: the pidfd proves that pid is still the same process.
  if (pidfd_pid(pidfd) != pid) return fmt::format("process {} ended during the checks", *pid);
  if (peer.pidfd && pidfd_pid(peer.pidfd.get()) != peer.pid) {
    return "the requesting process ended";
  }
  return "";
}

}  // namespace ezio::recorder::service
