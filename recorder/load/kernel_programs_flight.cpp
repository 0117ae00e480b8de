// SPDX-License-Identifier: GPL-2.0-only
// KernelPrograms' flight-recorded cgroups (bpf/flight.bpf.h, docs/flight-recorder.md).
#include <bpf/bpf.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <cerrno>

#include "common/error.h"
#include "common/unique_fd.h"
#include "flight.h"
#include "recorder/core/skeleton.h"
#include "recorder/load/kernel_programs.h"

namespace ezio::recorder {

namespace {

// The programs' flight_levels: a bit per level that holds a job's cgroup.
uint32_t levels_of(const std::array<uint64_t, kMaxSessions>& ids,
                   const std::array<unsigned, kMaxSessions>& levels) {
  uint32_t mask = 0;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i]) mask |= 1u << levels[i];
  }
  return mask;
}

}  // namespace

void KernelPrograms::record_cgroup(unsigned slot, uint64_t cgroup_id, unsigned level,
                                   uint32_t uid) {
  if (flight_cgroups_[slot]) fail("session slot {} records a cgroup already", slot);
  if (level >= EZIO_FLIGHT_MAX_LEVEL) {
    fail("cannot flight-record cgroup {}: it is {} levels deep, at most {}", cgroup_id, level,
         EZIO_FLIGHT_MAX_LEVEL - 1);
  }
  ezio_flight_job job{live_id(slot), uid};
  if (bpf_map_update_elem(map_fd("flight_cgroups"), &cgroup_id, &job, BPF_NOEXIST) != 0) {
    fail("cannot flight-record cgroup {}: {}", cgroup_id,
         errno == EEXIST ? "another session records it" : errno_text(errno));
  }
  flight_cgroups_[slot] = cgroup_id;
  flight_levels_[slot] = level;
  // After the entry: a program that sees the count or the level finds the entry.
  __atomic_store_n(&skel_->bss->flight_levels, levels_of(flight_cgroups_, flight_levels_),
                   __ATOMIC_SEQ_CST);
  __atomic_fetch_add(&skel_->bss->flight_jobs, 1, __ATOMIC_SEQ_CST);
}

void KernelPrograms::forget_cgroup(unsigned slot) {
  uint64_t id = flight_cgroups_[slot];
  if (!id) return;
  __atomic_fetch_sub(&skel_->bss->flight_jobs, 1, __ATOMIC_SEQ_CST);
  flight_cgroups_[slot] = 0;
  // Before the entry goes (a level left set costs a lookup that finds nothing).
  __atomic_store_n(&skel_->bss->flight_levels, levels_of(flight_cgroups_, flight_levels_),
                   __ATOMIC_SEQ_CST);
  bpf_map_delete_elem(map_fd("flight_cgroups"), &id);
}

bool KernelPrograms::enroll_running_process(unsigned slot, pid_t pid) {
  if (claimed_by_live_session(static_cast<uint32_t>(pid), live_id(slot))) return false;
  UniqueFd pidfd(static_cast<int>(syscall(SYS_pidfd_open, pid, 0)));
  if (!pidfd) return false;  // ended meanwhile
  trace_running_process(slot, pid, pidfd.get());
  return true;
}

}  // namespace ezio::recorder
