// SPDX-License-Identifier: GPL-2.0-only
#include "analysis/model/process_role.h"

#include <array>
#include <string>

#include "common/schema/properties.h"

namespace ezio::analysis {
namespace {

// Infrastructure calls remembered so that the block requests they caused are recognised (8 bytes
// each); past this, those requests count as the application's (docs/analysis.md).
constexpr size_t kMaxInfraCalls = 1 << 20;

// "<comm> [<pid>]" -> "<comm>".
std::string_view comm_of(std::string_view group_name) {
  if (auto pos = group_name.rfind(" ["); pos != std::string_view::npos && group_name.ends_with("]"))
    return group_name.substr(0, pos);
  return group_name;
}

}  // namespace

std::string_view role_key(ProcessRole r) {
  static constexpr std::array<std::string_view, 3> keys = {"rank", "launcher", "helper"};
  return keys[static_cast<size_t>(r)];
}

bool is_launcher_name(std::string_view comm) {
  comm = comm.substr(comm.rfind('/') + 1);
  // MPICH (hydra), Open MPI (ORTE, PRRTE), Slurm; the Debian alternatives' suffixes too.
  for (std::string_view p : {"mpiexec", "mpirun", "orterun", "prterun", "prun"}) {
    if (comm == p || comm.starts_with(std::string(p) + ".")) return true;
  }
  for (std::string_view n : {"hydra_pmi_proxy", "hydra_nameserver", "hydra_persist", "orted",
                             "prted", "srun", "slurmstepd", "pmix_server"}) {
    if (comm == n) return true;
  }
  return false;
}

ProcessRoles::ProcessRoles(const Definitions& defs) : defs_(defs) {
  std::map<uint64_t, uint64_t> parent;  // pid -> ppid
  std::map<uint64_t, bool> launcher;    // pid -> a launcher
  for (auto& [group, name] : defs.location_groups) {
    auto pid = defs.group_pids.find(group);
    if (pid == defs.group_pids.end()) continue;
    bool l = is_launcher_name(comm_of(name));
    launcher[pid->second] = l;
    launcher_ |= l;
    if (auto pp = defs.group_ppids.find(group); pp != defs.group_ppids.end())
      parent[pid->second] = pp->second;
  }
  for (auto& [pid, is_launcher] : launcher) {
    ProcessRole r = ProcessRole::kRank;
    if (is_launcher) {
      r = ProcessRole::kLauncher;
    } else if (launcher_) {
      // A rank is what a launcher started; below a rank, or above the launcher, a helper.
      auto pp = parent.find(pid);
      bool started_by_launcher =
          pp != parent.end() && launcher.contains(pp->second) && launcher[pp->second];
      r = started_by_launcher ? ProcessRole::kRank : ProcessRole::kHelper;
    }
    pids_[pid] = r;
  }
  for (auto& [group, name] : defs.location_groups) {
    auto pid = defs.group_pids.find(group);
    if (pid != defs.group_pids.end()) groups_[group] = pids_[pid->second];
  }
}

ProcessRole ProcessRoles::of_group(Ref group) const {
  auto it = groups_.find(group);
  return it == groups_.end() ? ProcessRole::kRank : it->second;
}

ProcessRole ProcessRoles::of_location(OTF2_LocationRef loc) const {
  const LocationDef* d = defs_.location(loc);
  return d ? of_group(d->group) : ProcessRole::kRank;
}

ProcessRole ProcessRoles::of_pid(uint64_t pid) const {
  auto it = pids_.find(pid);
  return it == pids_.end() ? ProcessRole::kRank : it->second;
}

IoScopeClassifier::IoScopeClassifier(const Definitions& defs) : defs_(defs), roles_(defs) {}

void IoScopeClassifier::begin_location(OTF2_LocationRef loc) {
  launcher_location_ = roles_.of_location(loc) == ProcessRole::kLauncher;
  pid_ = 0;
  if (const LocationDef* d = defs_.location(loc)) {
    if (auto it = defs_.group_pids.find(d->group); it != defs_.group_pids.end()) pid_ = it->second;
  }
}

bool IoScopeClassifier::thread_call(Ref handle, bool write, bool is_mmap, uint64_t call_id) {
  bool infra = launcher_location_;
  if (!infra && handle != OTF2_UNDEFINED_IO_HANDLE) {
    auto it = origins_.find(handle);
    if (it == origins_.end())
      it = origins_.emplace(handle, file_origin(defs_.handle_path(handle), false)).first;
    // A system file written is the application's (file_origin): its writes are.
    infra = it->second != FileOrigin::kApplication &&
            !(write && file_origin(defs_.handle_path(handle), true) == FileOrigin::kApplication);
    if (!infra && is_mmap && pid_) mapped_app_pids_.insert(pid_);
  }
  if (infra && call_id && infra_calls_.size() < kMaxInfraCalls) infra_calls_.insert(call_id);
  return infra;
}

bool IoScopeClassifier::block_request(uint64_t pid, uint64_t call_id, bool read) const {
  if (call_id) return infra_calls_.contains(call_id);
  if (pid == 0) return false;
  if (roles_.of_pid(pid) == ProcessRole::kLauncher) return true;
  return read && !mapped_app_pids_.contains(pid);
}

}  // namespace ezio::analysis
