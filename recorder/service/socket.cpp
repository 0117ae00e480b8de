// SPDX-License-Identifier: GPL-2.0-only
#include "recorder/service/socket.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "common/error.h"
#include "recorder/service/socket_access.h"

namespace ezio::recorder::service {
namespace {

sockaddr_un address_of(const std::filesystem::path& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.string().size() >= sizeof(addr.sun_path)) {
    fail("socket path too long ({} bytes at most): {}", sizeof(addr.sun_path) - 1, path.string());
  }
  std::strcpy(addr.sun_path, path.c_str());
  return addr;
}

// Only a socket may be replaced: a daemon that died leaves its socket behind, and nothing else
// at that path is ours.
void remove_stale_socket(const std::filesystem::path& path) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) return;
  if (!S_ISSOCK(st.st_mode)) fail("{} exists and is not a socket: not replacing it", path.string());
  UniqueFd probe(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
  sockaddr_un addr = address_of(path);
  if (connect(probe.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
    fail("an eziotraced already serves {}", path.string());
  }
  unlink(path.c_str());
}

}  // namespace

UniqueFd activated_socket() {
  const char* pid = getenv("LISTEN_PID");
  const char* fds = getenv("LISTEN_FDS");
  if (!pid || !fds || std::atol(pid) != getpid() || std::atoi(fds) < 1) return {};
  unsetenv("LISTEN_PID");
  unsetenv("LISTEN_FDS");
  unsetenv("LISTEN_FDNAMES");
  int type = 0;
  socklen_t len = sizeof(type);
  if (getsockopt(3, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_SEQPACKET) {
    fail("the socket systemd passed is not a SOCK_SEQPACKET socket (ListenSequentialPacket=)");
  }
  return UniqueFd(3);
}

UniqueFd listen_at(const std::filesystem::path& path, gid_t group) {
  prepare_socket_directory(path.parent_path(), group);
  remove_stale_socket(path);
  UniqueFd fd(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
  if (!fd) fail("socket: {}", errno_text(errno));
  sockaddr_un addr = address_of(path);
  // Made with no access at all, then opened to the group: never reachable by others meanwhile.
  mode_t old = umask(0777);
  int bound = bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  int err = errno;
  umask(old);
  if (bound != 0) fail("cannot bind {}: {}", path.string(), errno_text(err));
  if (chown(path.c_str(), 0, group) != 0 || chmod(path.c_str(), 0660) != 0) {
    fail("cannot give {} to its group: {}", path.string(), errno_text(errno));
  }
  if (listen(fd.get(), 64) != 0) fail("listen: {}", errno_text(errno));
  return fd;
}

UniqueFd connect_to(const std::filesystem::path& path) {
  UniqueFd fd(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
  if (!fd) fail("socket: {}", errno_text(errno));
  sockaddr_un addr = address_of(path);
  if (connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) return fd;
  int err = errno;
  if (err == EACCES || err == EPERM) fail("{}", why_socket_denied(path));
  if (err == ENOENT || err == ECONNREFUSED) {
    fail(
        "eziotraced is not running ({}: {}); start it (systemctl start eziotraced.socket) or "
        "record as root with --no-service",
        path.string(), errno_text(err));
  }
  fail("cannot connect to eziotraced at {}: {}", path.string(), errno_text(err));
}

}  // namespace ezio::recorder::service
