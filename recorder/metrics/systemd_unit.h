// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The systemd unit and slice a cgroup v2 path belongs to, read from the path alone (no systemd
// needed): what names a job that is not Slurm's.
#include <string>
#include <string_view>

namespace ezio::recorder::metrics {

struct SystemdPlace {
  std::string unit;   // "cron.service", "session-3.scope"; empty when the path is no unit's
  std::string slice;  // the slice holding the unit ("user-1000.slice", "-.slice" at the top)
  // Below a user's manager (unit user@1000.service), the user's own unit (systemd's
  // cg_path_get_user_unit, journald's _SYSTEMD_USER_UNIT): "app-firefox@a1.scope"; else empty.
  std::string user_unit;
};

// As systemd itself reads a path (its cg_path_get_unit, cg_path_get_slice): the slices from the
// root, then the first other directory is the unit if it is named as one (a service, scope,
// socket, mount or swap: the units that run processes); what is below it (a delegated subtree, a
// user manager's own units) belongs to that unit, a user manager's own unit being read below it
// the same way (user_unit). Names are systemd's, kept escaped as systemctl
// takes them (`\x2d`); the `_` systemd puts before a name that would clash with cgroupfs' own
// files is taken off. Nothing for the root, for paths not under systemd (`/docker/<id>`), and
// for slices alone.
SystemdPlace systemd_place(std::string_view cgroup_path);

}  // namespace ezio::recorder::metrics
