// SPDX-License-Identifier: GPL-2.0-only
// KernelPrograms' flight-recorded cgroups (bpf/flight.bpf.h, docs/flight-recorder.md).
#include <bpf/bpf.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "common/error.h"
#include "common/unique_fd.h"
#include "flight.h"
#include "recorder/core/skeleton.h"
#include "recorder/load/kernel_programs.h"

namespace ezio::recorder {

void KernelPrograms::record_cgroup(unsigned slot, uint64_t cgroup_id, uint32_t uid) {
  if (flight_cgroups_[slot]) fail("session slot {} records a cgroup already", slot);
  ezio_flight_job job{live_id(slot), uid};
  if (bpf_map_update_elem(map_fd("flight_cgroups"), &cgroup_id, &job, BPF_NOEXIST) != 0) {
    fail("cannot flight-record cgroup {}: {}", cgroup_id,
         errno == EEXIST ? "another session records it" : errno_text(errno));
  }
  flight_cgroups_[slot] = cgroup_id;
  // After the entry: a program that sees the count finds the entry.
  __atomic_fetch_add(&skel_->bss->flight_jobs, 1, __ATOMIC_SEQ_CST);
}

void KernelPrograms::forget_cgroup(unsigned slot) {
  uint64_t id = flight_cgroups_[slot];
  if (!id) return;
  __atomic_fetch_sub(&skel_->bss->flight_jobs, 1, __ATOMIC_SEQ_CST);
  bpf_map_delete_elem(map_fd("flight_cgroups"), &id);
  flight_cgroups_[slot] = 0;
}

bool KernelPrograms::enroll_running_process(unsigned slot, pid_t pid) {
  if (claimed_by_live_session(static_cast<uint32_t>(pid), live_id(slot))) return false;
  UniqueFd pidfd(static_cast<int>(syscall(SYS_pidfd_open, pid, 0)));
  if (!pidfd) return false;  // ended meanwhile
  trace_running_process(slot, pid, pidfd.get());
  return true;
}

}  // namespace ezio::recorder
