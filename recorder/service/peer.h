// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Who is on the other end of the socket, and whether the process it asks to trace is its own
// child that has not run a program of its own yet (docs/service.md, "Security checks").
#include <sys/types.h>

#include <optional>
#include <string>

#include "common/unique_fd.h"

namespace ezio::recorder::service {

struct Peer {
  pid_t pid = 0;
  uid_t uid = 0;
  gid_t gid = 0;
  UniqueFd pidfd;  // SO_PEERPIDFD: the connecting process itself, whatever its pid becomes
};

// SO_PEERCRED (and SO_PEERPIDFD where the kernel has it) of a connected socket.
Peer peer_of(int sock);

// The gid of a group name; nullopt when there is no such group.
std::optional<gid_t> group_id(const std::string& name);
// Whether uid may use the service: root, or a member of `group` (primary or supplementary, as the
// user database says; the socket's mode 0660 is the first gate, this the second).
bool may_use_service(uid_t uid, gid_t group);
std::string user_name(uid_t uid);

// The pid a pidfd refers to (from /proc/self/fdinfo); nullopt when fd is no pidfd or its process
// has ended (the kernel then shows -1).
std::optional<pid_t> pidfd_pid(int fd);

// Empty when the process of `pidfd` may join peer's session: it is the peer's child (PPid), runs
// with the peer's uid in all four of real, effective, saved and file-system uids, has not exec'd
// (its executable is the peer's own), and the pidfd still refers to it after these checks (no pid
// reuse in between); otherwise why not, for the client's message.
std::string check_child(const Peer& peer, pid_t claimed_pid, int pidfd);

}  // namespace ezio::recorder::service
