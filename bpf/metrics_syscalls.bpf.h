// SPDX-License-Identifier: GPL-2.0-only
/* The syscall and VFS series' programs (docs/metrics.md): a counted call's entry and exit, on
 * the raw syscall tracepoints or, where the kernel attaches them, fentry/fexit on the counted
 * system calls' own functions (__x64_sys_write …). With fentry only those calls pay (a BPF
 * trampoline on their function); with the tracepoints every system call of the node takes the
 * slow entry and passes two programs. Both count through call_entered and call_exited.
 * eziotraced loads either the fentry programs or the two tracepoints'
 * (recorder/metrics/metrics_programs.cpp). Included by metrics.bpf.c. */
#ifndef EZIO_METRICS_SYSCALLS_BPF_H
#define EZIO_METRICS_SYSCALLS_BPF_H

/* The system calls' and VFS series' latency is measured for one counted call in latency_every on
 * each CPU (eziotraced --metrics-latency-every; 1: every call), the sync calls always: their
 * counts, bytes and errors stay exact, their histograms count the calls timed (docs/metrics.md,
 * "Sampled latency"). An untimed call costs no clock read and no thread storage at its entry. */
const volatile __u32 latency_every = 1;

/* One tick per operation: with one shared tick, a program alternating reads and writes (dd)
 * and an even latency_every had every timed call a read, its writes never timed. */
struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, EZIO_M_SC_CLOSE + 1);
  __type(key, __u32);
  __type(value, __u32);
} latency_tick SEC(".maps");

/* Whether a counted call of op is timed: the sync calls always, the others one in latency_every
 * of that operation on this CPU. */
static __always_inline bool call_timed(__u16 op) {
  if (latency_every <= 1 || op == EZIO_M_SC_FSYNC || op == EZIO_M_SC_FDATASYNC ||
      op == EZIO_M_SC_SYNC_FILE_RANGE)
    return true;
  __u32 key = op;
  __u32* tick = bpf_map_lookup_elem(&latency_tick, &key);
  if (!tick) return true;
  __u32 t = *tick + 1;
  if (t >= latency_every) t = 0;
  *tick = t;
  return t == 0;
}

/* A counted call's entry, tagged (its syscall number, or its op beyond them for the fentry path):
 * a timed call's start, which its exit finds under the same tag (an untimed call leaves nothing:
 * its exit is counted without latency). */
static __always_inline int call_entered(__u32 tag, __u16 op) {
  if (!call_timed(op)) return 0;
  struct sc_start* s = bpf_task_storage_get(&sc_starts, bpf_get_current_task_btf(), 0,
                                            BPF_LOCAL_STORAGE_GET_F_CREATE);
  if (!s) {
    count_overflow(op);
    return 0;
  }
  s->t_enter = bpf_ktime_get_ns();
  s->nr = tag;
  return 0;
}

/* A counted call's exit: its syscall series, and its VFS series when fd is a regular file's; its
 * latency when its entry was timed. */
static __always_inline int call_exited(__u32 tag, __u16 op, __s64 fd, long ret) {
  struct sc_start* s = bpf_task_storage_get(&sc_starts, bpf_get_current_task_btf(), 0,
                                            BPF_LOCAL_STORAGE_GET_F_CREATE);
  if (!s) {
    count_overflow(op);
    return 0;
  }
  __u64 ns = 0;
  bool timed = s->t_enter && s->nr == tag;
  /* Every call is timed: an exit without its entry is one begun before the programs attached. */
  if (!timed && latency_every <= 1) return 0;
  if (timed) {
    ns = bpf_ktime_get_ns() - s->t_enter;
    s->t_enter = 0;
  }
  struct job j = {.cgroup = bpf_get_current_cgroup_id(), .uid = bpf_get_current_uid_gid()};
  cache_job(s, j);
  if (keep_vfs) count_vfs(s, &j, op, fd, ret, timed, ns);
  if (!keep_syscall) return 0;
  struct ezio_metric_key key = {
      .cgroup = j.cgroup, .uid = j.cgroup ? j.uid : 0, .op = op, .kind = EZIO_M_KIND_MAIN};
  struct ezio_metric_value* v = cached_series(&key, &s->sc_slot[op & 7]);
  if (!v) return 0;
  v->count += 1;
  if (ret < 0) {
    v->errors += 1;
  } else if (op == EZIO_M_SC_READ || op == EZIO_M_SC_WRITE) {
    v->bytes += ret;
  }
  if (timed) add_latency(v, ns);
  return 0;
}

/* The tracepoint path (a kernel where fentry does not attach): every system call of the node
 * passes these two programs, the counted ones go on. */
SEC("tp_btf/sys_enter")
int BPF_PROG(ezio_m_sys_enter, struct pt_regs* regs, long id) {
  if (id < 0 || id >= EZIO_MAX_SYSCALL_NR || !syscall_op[id]) return 0;
  return call_entered(id, syscall_op[id]);
}

SEC("tp_btf/sys_exit")
int BPF_PROG(ezio_m_sys_exit, struct pt_regs* regs, long ret) {
  long id = regs->orig_ax;
  if (id < 0 || id >= EZIO_MAX_SYSCALL_NR) return 0;
  __u16 op = syscall_op[id];
  if (!op) return 0;
  return call_exited(id, op, regs->di, ret);
}

/* Tags of the fentry path's entries: beyond every syscall number, one per op. */
#define EZIO_M_FENTRY_TAG(op) (EZIO_MAX_SYSCALL_NR + (op))

/* The x86-64 wrapper takes the user's registers: the fd is the first argument (di). */
#define EZIO_M_FENTRY(name, op)                                               \
  SEC("fentry/__x64_sys_" #name)                                              \
  int BPF_PROG(ezio_mf_##name##_entry, const struct pt_regs* regs) {          \
    return call_entered(EZIO_M_FENTRY_TAG(op), op);                           \
  }                                                                           \
  SEC("fexit/__x64_sys_" #name)                                               \
  int BPF_PROG(ezio_mf_##name##_exit, const struct pt_regs* regs, long ret) { \
    return call_exited(EZIO_M_FENTRY_TAG(op), op, regs->di, ret);             \
  }

/* The syscalls of the table (recorder/core/syscall_table.cpp) the tracepoint path counts. */
EZIO_M_FENTRY(read, EZIO_M_SC_READ)
EZIO_M_FENTRY(pread64, EZIO_M_SC_READ)
EZIO_M_FENTRY(readv, EZIO_M_SC_READ)
EZIO_M_FENTRY(preadv, EZIO_M_SC_READ)
EZIO_M_FENTRY(preadv2, EZIO_M_SC_READ)
EZIO_M_FENTRY(write, EZIO_M_SC_WRITE)
EZIO_M_FENTRY(pwrite64, EZIO_M_SC_WRITE)
EZIO_M_FENTRY(writev, EZIO_M_SC_WRITE)
EZIO_M_FENTRY(pwritev, EZIO_M_SC_WRITE)
EZIO_M_FENTRY(pwritev2, EZIO_M_SC_WRITE)
EZIO_M_FENTRY(fsync, EZIO_M_SC_FSYNC)
EZIO_M_FENTRY(fdatasync, EZIO_M_SC_FDATASYNC)
EZIO_M_FENTRY(sync_file_range, EZIO_M_SC_SYNC_FILE_RANGE)
EZIO_M_FENTRY(open, EZIO_M_SC_OPEN)
EZIO_M_FENTRY(openat, EZIO_M_SC_OPEN)
EZIO_M_FENTRY(openat2, EZIO_M_SC_OPEN)
EZIO_M_FENTRY(creat, EZIO_M_SC_OPEN)
EZIO_M_FENTRY(close, EZIO_M_SC_CLOSE)

#endif
