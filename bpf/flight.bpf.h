// SPDX-License-Identifier: GPL-2.0-only
/* The flight recorder's selection (docs/flight-recorder.md): the processes of a flight-recorded
 * cgroup v2 (a job) and of the cgroups below it join that job's session when they enter it, so that
 * the syscall and layer hooks turn everyone else away as they turn away every untraced process,
 * with the one load of the TGID filter bit (task.bpf.h). A process enters a job by a fork inside it
 * (the child of an untraced parent, or one clone3 put there with CLONE_INTO_CGROUP) or by being
 * moved into it (cgroup_attach_task); those already there when the job's recording starts are added
 * by eziotraced (KernelPrograms::trace_running_process). Only the job owner's processes join (real
 * and effective uid): other users' file names never enter the job's ring. */
#ifndef EZIO_FLIGHT_BPF_H
#define EZIO_FLIGHT_BPF_H

#include "common.bpf.h"
#include "flight.h"
#include "process.bpf.h"

/* cgroup id (its kernfs node's id, the directory's inode number) -> the job. */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, EZIO_MAX_SESSIONS);
  __type(key, __u64);
  __type(value, struct ezio_flight_job);
} flight_cgroups SEC(".maps");

/* Entries in flight_cgroups, written by eziotraced: while 0, a fork or a migration costs one load
 * more, no lookup. */
__u32 flight_jobs = 0;
/* Bit l set: some job's cgroup is at level l (the root's is 0). A process joins a job whose cgroup
 * is its own or one of its ancestors (Slurm's tasks run in job_<id>/step_<n>/user/task_<k>), and
 * only the levels that hold a job are looked up: one lookup per fork when every job is at one
 * level, as Slurm's are. */
__u32 flight_levels = 0;

/* Before 6.0 (commit 7f203bc89eb6, "cgroup: Replace cgroup->ancestor_ids[] with ->ancestors[]")
 * the ancestors were kept by id. */
struct cgroup___ids {
  u64 ancestor_ids[0];
} __attribute__((preserve_access_index));

/* The id of cg's ancestor at level l (l <= cg's level). */
static __always_inline __u64 ancestor_id(struct cgroup* cg, __u32 l) {
  if (bpf_core_field_exists(struct cgroup___ids, ancestor_ids)) {
    __u64 id = 0;
    struct cgroup___ids* old = (void*)cg;
    bpf_probe_read_kernel(&id, sizeof(id), &old->ancestor_ids[l]);
    return id;
  }
  struct cgroup* a = 0;
  /* The array's offset relocated (CO-RE), the index added here: a variable index has no
   * relocation of its own. */
  __u64 at = bpf_core_field_offset(struct cgroup, ancestors) + (__u64)l * sizeof(a);
  bpf_probe_read_kernel(&a, sizeof(a), (char*)cg + at);
  return BPF_CORE_READ(a, kn, id);
}

/* The job of cgroup cg or of one of its ancestors, the levels looked up from the root down: when
 * jobs nest, the outermost takes the process. */
static __always_inline struct ezio_flight_job* flight_job_in(struct cgroup* cg) {
  __u32 level = BPF_CORE_READ(cg, level);
  __u64 mask = flight_levels & ((2ull << (level & 31)) - 1);
  for (__u32 l = 0; l < EZIO_FLIGHT_MAX_LEVEL && mask; ++l, mask >>= 1) {
    if (!(mask & 1)) continue;
    __u64 id = ancestor_id(cg, l);
    struct ezio_flight_job* job = bpf_map_lookup_elem(&flight_cgroups, &id);
    if (job) return job;
  }
  return 0;
}

static __always_inline struct ezio_flight_job* flight_job_of(struct cgroup* cg,
                                                             struct task_struct* task) {
  struct ezio_flight_job* job = flight_job_in(cg);
  if (!job) return 0;
  const struct cred* cred = BPF_CORE_READ(task, real_cred);
  __u32 uid = BPF_CORE_READ(cred, uid.val);
  __u32 euid = BPF_CORE_READ(cred, euid.val);
  return uid == job->uid && euid == job->uid ? job : 0;
}

/* The fork of an untraced parent: the new process joins the job its cgroup is flight-recorded by
 * (a new thread of an untraced process never does: its process is not the job's). */
static __always_inline void flight_fork(struct task_struct* parent, struct task_struct* child) {
  if (!flight_jobs || child->tgid == parent->tgid) return;
  struct ezio_flight_job* job = flight_job_of(BPF_CORE_READ(child, cgroups, dfl_cgrp), child);
  if (!job) return;
  struct ezio_traced tr = {EZIO_ACTIVE, job->session};
  if (!enter_session(tr.session)) return;
  fork_into(tr, parent, child);
  leave_session(tr.session);
}

/* The exec of an untraced process in a flight-recorded cgroup, as its owner (its credentials are
 * the new program's by now): it joins the job, and its exec is recorded as a traced one's. What a
 * job's launcher does (Slurm's step daemon: a fork, the move into the job's cgroup, setuid, exec)
 * joins it here, the move having been made as root. */
static __always_inline bool flight_exec(struct task_struct* p) {
  if (!flight_jobs) return false;
  struct ezio_flight_job* job = flight_job_of(BPF_CORE_READ(p, cgroups, dfl_cgrp), p);
  if (!job) return false;
  __u32 session = job->session;
  if (!enter_session(session)) return false;
  __u32 tgid = p->tgid;
  struct ezio_traced tr = {EZIO_ACTIVE, session};
  bool joined = bpf_map_update_elem(&traced, &tgid, &tr, BPF_NOEXIST) == 0;
  leave_session(session);
  return joined;
}

/* A process moved into a cgroup of the default hierarchy (or below a job's) (hierarchy 0: cgroup
 * v2; a hybrid host's v1 hierarchies number their cgroups apart). Its threads get their state at
 * their next event (state_missing, as for a process eziotraced adds). One that leaves its job's
 * cgroup goes on being recorded by it (docs/flight-recorder.md). */
SEC("tp_btf/cgroup_attach_task")
int BPF_PROG(ezio_cgroup_attach, struct cgroup* dst, const char* path, struct task_struct* task,
             bool threadgroup) {
  if (!flight_jobs || BPF_CORE_READ(dst, root, hierarchy_id) != 0) return 0;
  __u32 tgid = task->tgid;
  if (bpf_map_lookup_elem(&traced, &tgid)) return 0;
  struct ezio_flight_job* job = flight_job_of(dst, task);
  if (!job) return 0;
  __u32 session = job->session;
  if (!enter_session(session)) return 0;
  struct ezio_traced tr = {EZIO_ACTIVE, session};
  if (bpf_map_update_elem(&traced, &tgid, &tr, BPF_NOEXIST) == 0) {
    mark_traced_tgid(tgid);
    state_missing = 1;
  } else {
    count_drop_at(session_slot(session) * EZIO_LAYER_COUNT + EZIO_LAYER_PROCESS, session);
  }
  leave_session(session);
  return 0;
}

#endif
