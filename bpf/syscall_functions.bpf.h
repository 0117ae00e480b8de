// SPDX-License-Identifier: GPL-2.0-only
/* The syscall layer's fentry/fexit way in (bpf/syscall.bpf.h has the tracepoints' and the body
 * both share): a program on the entry and one on the exit of each recorded syscall's function.
 * The x86-64 syscall functions take the user's registers, which hold the number and arguments as
 * the tracepoints give them; fexit sees the return value sys_exit gets.
 *
 * The entry and the exit bodies are each verified once (issue #31): with 32 fentry and 32 fexit
 * programs each carrying its body, the verifier checked them 32 times (84 541 instructions against
 * 4 406 for the tracepoints; seconds of load under TCG). A syscall's programs tail-call
 * EZIO_SC_ENTRY_BODY and EZIO_SC_EXIT_BODY instead: an fentry and an fexit program loaded against
 * EZIO_SC_BODY_FUNCTION (bpf/hooks.h) and never attached. The context is the same: every
 * __x64_sys_* takes the registers (args[0]) and returns a long (args[1]). The bodies read the
 * syscall's number from the registers (orig_ax), as the tracepoint path does.
 *
 * The kernel takes a tail call between tracing programs of the same type and JIT state
 * (kernel/bpf/core.c, __bpf_prog_map_compatible), since 6.12 (CVE-2024-50063, in 6.1's stable
 * releases since 2025) only on functions of one prototype, one BTF type, and since 2025 only of
 * one attach type: hence one table per attach type, fentry's and fexit's. A syscall whose function
 * has another prototype in the kernel's BTF (the sys_ni.c stub's, argument __unused, not regs:
 * msync on 6.1; msync, copy_file_range and io_uring_enter on 6.18) takes its _entry_whole and
 * _exit_whole programs, the bodies in them. The recorder chooses per syscall
 * (recorder/probe/probe.cpp) and puts the bodies in their tables before any of these programs is
 * attached (recorder/load/kernel_programs_attach.cpp). */
#ifndef EZIO_SYSCALL_FUNCTIONS_BPF_H
#define EZIO_SYSCALL_FUNCTIONS_BPF_H

#include "common.bpf.h"
#include "hooks.h"
#include "syscall.bpf.h"
#include "task.bpf.h"

struct {
  __uint(type, BPF_MAP_TYPE_PROG_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, __u32);
} sc_entry_bodies SEC(".maps"), sc_exit_bodies SEC(".maps");

/* BPF_PROG pastes its name: the name macro is expanded on the way. */
#define EZIO_SC_ENTRY_BODY_PROG_(name) int BPF_PROG(name, const struct pt_regs* regs)
#define EZIO_SC_EXIT_BODY_PROG_(name) int BPF_PROG(name, const struct pt_regs* regs, long ret)
SEC("fentry/" EZIO_HOOK_STR(EZIO_SC_BODY_FUNCTION))
EZIO_SC_ENTRY_BODY_PROG_(EZIO_SC_ENTRY_BODY) { return sc_entered(regs, regs->orig_ax); }
SEC("fexit/" EZIO_HOOK_STR(EZIO_SC_BODY_FUNCTION))
EZIO_SC_EXIT_BODY_PROG_(EZIO_SC_EXIT_BODY) { return sc_exited(regs, ret); }
#undef EZIO_SC_ENTRY_BODY_PROG_
#undef EZIO_SC_EXIT_BODY_PROG_

/* Only a process that may be traced goes on to the body: the node's others (most calls) pay no
 * tail call. Should the tail call not happen (the body not in its table, which the recorder fills
 * before it attaches), the call is lost, counted as a loss of no session, which every session's
 * count takes, never silently: not the thread's own state and session, as looking them up is most
 * of what the bodies do, and these programs are to be a filter and a tail call and no more. */
static __always_inline int sc_tail_call(void* ctx, void* bodies) {
  if (!tgid_may_be_traced(bpf_get_current_task_btf())) return 0;
  bpf_tail_call(ctx, bodies, 0);
  count_global_drop(EZIO_LAYER_SYSCALL);
  return 0;
}

#define EZIO_SC_FUNCTION_PROGS_(name, fn)                                           \
  SEC("fentry/__x64_sys_" #fn)                                                      \
  int BPF_PROG(ezio_sc_##name##_entry, const struct pt_regs* regs) {                \
    return sc_tail_call(ctx, &sc_entry_bodies);                                     \
  }                                                                                 \
  SEC("fentry/__x64_sys_" #fn)                                                      \
  int BPF_PROG(ezio_sc_##name##_entry_whole, const struct pt_regs* regs) {          \
    return sc_entered(regs, regs->orig_ax);                                         \
  }                                                                                 \
  SEC("fexit/__x64_sys_" #fn)                                                       \
  int BPF_PROG(ezio_sc_##name##_exit, const struct pt_regs* regs, long ret) {       \
    return sc_tail_call(ctx, &sc_exit_bodies);                                      \
  }                                                                                 \
  SEC("fexit/__x64_sys_" #fn)                                                       \
  int BPF_PROG(ezio_sc_##name##_exit_whole, const struct pt_regs* regs, long ret) { \
    return sc_exited(regs, ret);                                                    \
  }
EZIO_SYSCALL_FUNCTIONS(EZIO_SC_FUNCTION_PROGS_)
#undef EZIO_SC_FUNCTION_PROGS_

#endif
