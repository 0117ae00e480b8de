// SPDX-License-Identifier: GPL-2.0-only
/* The fentry path of the syscall and VFS series (docs/metrics.md): fentry/fexit on the counted
 * system calls' own functions (__x64_sys_write …), where the kernel attaches them. Only those
 * calls pay (a BPF trampoline on their function); with the tracepoint path every system call of
 * the node takes the slow entry and passes two programs. The same series, counted by the same
 * code (call_entered, call_exited) as the tracepoints'. eziotraced loads either these programs or
 * the two tracepoints' (recorder/metrics/metrics_programs.cpp). Included by metrics.bpf.c. */
#ifndef EZIO_METRICS_SYSCALLS_BPF_H
#define EZIO_METRICS_SYSCALLS_BPF_H

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
