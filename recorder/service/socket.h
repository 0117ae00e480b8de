// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The service's Unix socket: made by eziotraced (or handed over by systemd's eziotraced.socket),
// connected to by eziotrace.
#include <sys/types.h>

#include <filesystem>
#include <string>

#include "common/unique_fd.h"

namespace ezio::recorder::service {

inline constexpr char kDefaultSocket[] = "/run/eziotrace/eziotraced.sock";
inline constexpr char kDefaultGroup[] = "eziotrace";

// The listening socket systemd passed (LISTEN_PID/LISTEN_FDS, fd 3), if any.
UniqueFd activated_socket();
// Binds a SOCK_SEQPACKET socket at path, mode 0660, group `group`, in a directory the group's
// members can reach (socket_access.h: made 0755 when missing; fails when they could not). A socket
// file left by a service that died is replaced; any other file is refused.
UniqueFd listen_at(const std::filesystem::path& path, gid_t group);
// Connects to the service; fails with a message saying what to do (not running, not in the group,
// a directory on the way the user cannot search).
UniqueFd connect_to(const std::filesystem::path& path);

}  // namespace ezio::recorder::service
