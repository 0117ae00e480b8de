// SPDX-License-Identifier: GPL-2.0-only
/* Follows the target process tree in the kernel, so a child is traced from its first
 * instruction without the recorder having to notice it. */
#ifndef EZIO_PROCESS_BPF_H
#define EZIO_PROCESS_BPF_H

#include "common.bpf.h"
#include "syscall.bpf.h"

static __always_inline struct ezio_proc_rec* proc_record(__u32 session, __u8 kind, __u32 pid,
                                                         __u32 tid) {
  struct ezio_proc_rec* r = reserve(session, sizeof(*r), EZIO_LAYER_PROCESS);
  if (!r) return 0;
  fill_header(&r->h, kind, EZIO_LAYER_PROCESS, sizeof(*r), pid, tid);
  r->ts = bpf_ktime_get_ns();
  r->ppid = 0;
  r->parent_tid = 0;
  r->is_thread = 0;
  r->exit_code = 0;
  r->filename[0] = 0;
  return r;
}

/* The child of a session's process joins the session (its tree, its state, its record). */
static __always_inline void fork_into(struct ezio_traced tr, struct task_struct* parent,
                                      struct task_struct* child) {
  __u32 ptgid = parent->tgid;
  __u32 ctgid = child->tgid;
  bool thread = ctgid == ptgid;
  if (!thread && bpf_map_update_elem(&traced, &ctgid, &tr, BPF_ANY)) {
    count_drop(tr.session, EZIO_LAYER_PROCESS);
    return;
  }
  if (tr.state != EZIO_ACTIVE) return;
  /* Before the child first runs: the tracepoint fires before it is woken up. */
  create_task_state(child, tr.session, EZIO_LAYER_PROCESS);
  struct ezio_proc_rec* r = proc_record(tr.session, EZIO_REC_FORK, ctgid, child->pid);
  if (!r) return;
  r->ppid = ptgid;
  r->parent_tid = parent->pid;
  r->is_thread = thread;
  bpf_probe_read_kernel_str(r->comm, sizeof(r->comm), child->comm);
  submit(tr.session, r);
}

/* A new process of an untraced parent in a flight-recorded cgroup, and an untraced process's exec
 * there (bpf/flight.bpf.h). */
static __always_inline void flight_fork(struct task_struct* parent, struct task_struct* child);
static __always_inline bool flight_exec(struct task_struct* p);

SEC("tp_btf/sched_process_fork")
int BPF_PROG(ezio_fork, struct task_struct* parent, struct task_struct* child) {
  __u32 ptgid = parent->tgid;
  struct ezio_traced* entry = bpf_map_lookup_elem(&traced, &ptgid);
  if (!entry) {
    flight_fork(parent, child);
    return 0;
  }
  struct ezio_traced tr = *entry;
  /* A closed session's processes leave the table; one forking meanwhile passes nothing on. Inside
   * the session's gate (common.bpf.h, in_flight): once the session has ended, no child joins it,
   * so none is left in the table when its processes leave it. */
  if (!enter_session(tr.session)) return 0;
  fork_into(tr, parent, child);
  leave_session(tr.session);
  return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(ezio_exec, struct task_struct* p, pid_t old_pid, struct linux_binprm* bprm) {
  __u32 tgid = p->tgid;
  struct ezio_traced* tr = bpf_map_lookup_elem(&traced, &tgid);
  if (!tr && flight_exec(p)) tr = bpf_map_lookup_elem(&traced, &tgid);
  if (!tr || !session_live(tr->session)) return 0;
  /* An exec that gains privileges (setuid, setgid, file capabilities: AT_SECURE) leaves the tree
   * with its descendants: the user whose session it is may not see a more privileged program's
   * I/O (eziotraced, docs/service.md). Its state goes too, so no event of it enters the ring. */
  if (BPF_CORE_READ_BITFIELD(bprm, secureexec)) {
    /* Said in the archive, not left to be guessed from a process that went quiet. */
    struct ezio_proc_rec* r = proc_record(tr->session, EZIO_REC_LEAVE, tgid, p->pid);
    if (r) {
      bpf_probe_read_kernel_str(r->comm, sizeof(r->comm), p->comm);
      bpf_probe_read_kernel_str(r->filename, sizeof(r->filename), BPF_CORE_READ(bprm, filename));
      submit(tr->session, r);
    }
    bpf_map_delete_elem(&traced, &tgid);
    bpf_task_storage_delete(&tasks, p);
    return 0;
  }
  tr->state = EZIO_ACTIVE;
  __u32 session = tr->session;
  /* An exec leaves one thread in the process, this one: the others get theirs at their fork. */
  create_task_state(p, session, EZIO_LAYER_PROCESS);
  struct ezio_proc_rec* r = proc_record(session, EZIO_REC_EXEC, tgid, p->pid);
  if (!r) return 0;
  bpf_probe_read_kernel_str(r->comm, sizeof(r->comm), p->comm);
  bpf_probe_read_kernel_str(r->filename, sizeof(r->filename), BPF_CORE_READ(bprm, filename));
  submit(session, r);
  return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(ezio_exit, struct task_struct* p) {
  __u32 tgid = p->tgid;
  struct ezio_traced* tr = bpf_map_lookup_elem(&traced, &tgid);
  if (!tr) return 0;
  __u32 tid = p->pid;
  __u32 session = tr->session;
  if (tr->state == EZIO_ACTIVE) {
    struct ezio_proc_rec* r = proc_record(session, EZIO_REC_EXIT, tgid, tid);
    if (r) {
      r->exit_code = p->exit_code;
      bpf_probe_read_kernel_str(r->comm, sizeof(r->comm), p->comm);
      submit(session, r);
    }
  }
  /* signal->live reaches 0 when the last thread of the group exits. */
  if (BPF_CORE_READ(p, signal, live.counter) == 0) bpf_map_delete_elem(&traced, &tgid);
  return 0;
}

#endif
