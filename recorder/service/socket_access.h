// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Whether the members of the service's group can reach its socket: they need search permission on
// every directory above it, then write permission on the socket itself. eziotraced checks the
// first before it serves (a socket no member can reach would say "serving" and refuse them all);
// eziotrace, refused, tells which of the two failed.
#include <sys/types.h>

#include <filesystem>
#include <string>

namespace ezio::recorder::service {

// The socket's directory for eziotraced, before it binds there: made 0755 when missing; the
// default one (/run/eziotrace, the service's own) given search permission for all when root owns
// it without (an older eziotrace's probe cache made it 0700); then every directory from the root
// down to it must let the members of `group` through. Fails naming the directory, its mode and
// owner when one does not.
void prepare_socket_directory(const std::filesystem::path& dir, gid_t group);

// Why this process cannot connect to the socket at `path` after connect() said EACCES or EPERM:
// a directory it cannot search (path, mode, owner), not being in the socket's group, or the
// socket's mode. The text of the client's message.
std::string why_socket_denied(const std::filesystem::path& path);

}  // namespace ezio::recorder::service
