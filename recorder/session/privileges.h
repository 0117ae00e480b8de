// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// Who the recorder is, and who the application runs as.
#include <sys/types.h>

#include <filesystem>
#include <vector>

namespace ezio::recorder {

// The user the application runs as: under sudo, the invoking user (SUDO_UID/SUDO_GID) with that
// user's supplementary groups; otherwise the recorder's own identity (drop = false).
struct TargetUser {
  bool drop = false;
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;
};

// Throws a message naming what is missing unless the process may load tracing BPF programs:
// CAP_BPF together with CAP_PERFMON, or CAP_SYS_ADMIN, in its effective set (root included).
void check_recording_privileges();
TargetUser target_user();
// Gives the output to the target user, so that a recording made with sudo is the user's.
void give_to(const std::filesystem::path& path, const TargetUser& user);

}  // namespace ezio::recorder
