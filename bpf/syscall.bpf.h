// SPDX-License-Identifier: GPL-2.0-only
/* Syscall layer: entry and exit of the I/O syscalls of the target tree, paired in the kernel into
 * one record per call. Which syscalls, and where their arguments are, comes from the recorder
 * (sc_desc, set before load), so this code has no syscall numbers in it. Two ways in, one body
 * (sc_entered, sc_exited), so that the records are the same whichever the kernel allows: the raw
 * sys_enter/sys_exit tracepoints, which every syscall of the node passes, or fentry/fexit on the
 * recorded syscalls' own functions (bpf/hooks.h, EZIO_SYSCALL_FUNCTIONS;
 * bpf/syscall_functions.bpf.h), which only they pass. The recorder loads one way or the other,
 * never both (recorder/probe/probe.cpp, plan_syscall). */
#ifndef EZIO_SYSCALL_BPF_H
#define EZIO_SYSCALL_BPF_H

#include "common.bpf.h"
#include "fs.bpf.h"
#include "hooks.h"
#include "task.bpf.h"
#include "vfs.bpf.h"

#define EZIO_MAX_IOV 16

const volatile struct ezio_sc_desc sc_desc[EZIO_MAX_SYSCALL_NR] = {};

static __always_inline int sc_entered(const struct pt_regs* regs, long id) {
  if (id < 0 || id >= EZIO_MAX_SYSCALL_NR) return 0;
  if (sc_desc[id].cls == EZIO_SC_IGNORE) return 0;
  struct ezio_task* t = traced_task(EZIO_LAYER_SYSCALL);
  if (!t) return 0;
  struct inflight_call* c = &t->call;
  c->t_enter = bpf_ktime_get_ns();
  c->nr = id;
  c->args[0] = regs->di;
  c->args[1] = regs->si;
  c->args[2] = regs->dx;
  c->args[3] = regs->r10;
  c->args[4] = regs->r8;
  c->args[5] = regs->r9;
  c->call_id = next_call_id(t);
  c->active = 1;
  return 0;
}

static __always_inline __u64 sum_iov(__u64 iov_ptr, __u64 iovcnt, __u32* flags) {
  __u64 total = 0;
  if (iovcnt > EZIO_MAX_IOV) *flags |= EZIO_SCF_IOV_TRUNCATED;
  for (int i = 0; i < EZIO_MAX_IOV; i++) {
    if (i >= iovcnt) break;
    struct iovec iov;
    if (bpf_probe_read_user(&iov, sizeof(iov), (void*)(iov_ptr + i * sizeof(iov)))) break;
    total += iov.iov_len;
  }
  return total;
}

static __always_inline void fill_syscall(struct ezio_syscall_rec* r, const struct inflight_call* c,
                                         const volatile struct ezio_sc_desc* d, long ret,
                                         __u64 pid_tgid, __u8 kind, __u32 size) {
  fill_header(&r->h, kind, EZIO_LAYER_SYSCALL, size, pid_tgid >> 32, (__u32)pid_tgid);
  r->call_id = c->call_id;
  r->t_enter = c->t_enter;
  r->t_exit = bpf_ktime_get_ns();
  r->ret = ret;
  r->nr = c->nr;
  r->flags = 0;
  r->fd = (__s64)arg_or(c, d->fd_arg, (__u64)-1);
  r->offset = (__s64)arg_or(c, d->offset_arg, (__u64)-1);
  r->arg = arg_or(c, d->extra_arg, 0);
  if (d->cls == EZIO_SC_VECTOR)
    r->count = sum_iov(c->args[1], arg_or(c, d->count_arg, 0), &r->flags);
  else
    r->count = arg_or(c, d->count_arg, 0);
}

/* The syscall's number is the user's orig_ax, both at the tracepoint and in the function's
 * argument (the same struct pt_regs). */
static __always_inline int sc_exited(const struct pt_regs* regs, long ret) {
  long id = regs->orig_ax;
  if (id < 0 || id >= EZIO_MAX_SYSCALL_NR) return 0;
  const volatile struct ezio_sc_desc* d = &sc_desc[id];
  if (d->cls == EZIO_SC_IGNORE) return 0;
  struct task_struct* task = bpf_get_current_task_btf();
  if (!tgid_may_be_traced(task)) return 0;
  /* Not traced_task(): a thread without state made no traced entry, so there is nothing to pair. */
  struct ezio_task* t = bpf_task_storage_get(&tasks, task, 0, 0);
  if (!t || !t->call.active) return 0;
  struct inflight_call* c = &t->call;
  c->active = 0;
  if (c->nr != id) { /* a stale entry (the syscall was restarted as another one) */
    fs_flush_run(t);
    return 0;
  }
  fs_run_settle(t, ret);
  __u64 pid_tgid = bpf_get_current_pid_tgid();
  /* Resolved once for both kinds of call, so that its load through the task's BTF pointer is
   * verified on one path (inode.bpf.h, tp_inode_ident). */
  __u8 op = EZIO_VFS_NONE;
  struct file* f = session_wants(t->session, EZIO_LAYER_VFS) ? vfs_derived_file(c, d, ret, &op) : 0;
  if (d->cls == EZIO_SC_OPEN) {
    struct ezio_open_rec* r = reserve(t->session, sizeof(*r), EZIO_LAYER_SYSCALL);
    if (r) {
      fill_syscall(&r->sc, c, d, ret, pid_tgid, EZIO_REC_OPEN, sizeof(*r));
      r->open_flags = arg_or(c, d->flags_arg, 0);
      r->mode = arg_or(c, d->mode_arg, 0);
      if (d->flags_arg == EZIO_NO_ARG && d->extra_arg != EZIO_NO_ARG) {
        /* openat2: flags and mode live in the struct open_how the extra argument points to */
        struct open_how how = {};
        bpf_probe_read_user(&how, sizeof(how), (void*)r->sc.arg);
        r->open_flags = how.flags;
        r->mode = how.mode;
      }
      long n = bpf_probe_read_user_str(r->path, sizeof(r->path), (void*)arg_or(c, d->path_arg, 0));
      if (n < 0) r->path[0] = 0;
      if (n == sizeof(r->path)) r->sc.flags |= EZIO_SCF_PATH_TRUNCATED;
      submit_task(t, r);
    }
    vfs_after_open(t, d, ret, pid_tgid, f, op);
    fs_flush_run(t);
    return 0;
  }
  if (f) {
    struct fs_run* run = &t->fs_run;
    bool run_here = run->part.hits && run->call_id == c->call_id;
    struct ezio_syscall_vfs_rec* r = reserve(t->session, sizeof(*r), EZIO_LAYER_SYSCALL);
    if (!r) { /* the call's VFS and FS events were to travel with it: lost as well */
      count_drop(t->session, EZIO_LAYER_VFS);
      if (run_here) {
        count_drop(t->session, EZIO_LAYER_FS);
        run->part.hits = 0;
      }
      return 0;
    }
    fill_syscall(&r->sc, c, d, ret, pid_tgid, EZIO_REC_SYSCALL_VFS, sizeof(*r));
    bool path_unsent = vfs_fill_part(&r->vfs, t, f, op, c, d, ret);
    if (run_here) {
      r->fs = run->part;
      run->part.hits = 0;
    } else {
      __builtin_memset(&r->fs, 0, sizeof(r->fs));
    }
    submit_task(t, r);
    vfs_file_sent(t, (__u64)f, path_unsent, pid_tgid); /* f: read from the fd table, a number */
  } else {
    struct ezio_syscall_rec* r = reserve(t->session, sizeof(*r), EZIO_LAYER_SYSCALL);
    if (r) {
      fill_syscall(r, c, d, ret, pid_tgid, EZIO_REC_SYSCALL, sizeof(*r));
      submit_task(t, r);
    }
  }
  fs_flush_run(t); /* hits that could not travel with the call, if any */
  return 0;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(ezio_sys_enter, struct pt_regs* regs, long id) { return sc_entered(regs, id); }

SEC("tp_btf/sys_exit")
int BPF_PROG(ezio_sys_exit, struct pt_regs* regs, long ret) { return sc_exited(regs, ret); }

/* The fentry/fexit way in, on these bodies. */
#include "syscall_functions.bpf.h"

#endif
