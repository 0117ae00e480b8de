// SPDX-License-Identifier: GPL-2.0-only
/* The floor under eziotrace's syscall hooks: programs on the same two tracepoints that do nothing.
 * What they cost is the kernel's (the syscall slow path taken once a syscall tracepoint is on, the
 * tracepoint, the BPF dispatch), paid by any tool that hooks syscalls this way. */
// The kernel's types come before libbpf's headers, which use them.
// clang-format off
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
// clang-format on

char LICENSE[] SEC("license") = "GPL";

SEC("tp_btf/sys_enter")
int BPF_PROG(floor_sys_enter, struct pt_regs* regs, long id) { return 0; }

SEC("tp_btf/sys_exit")
int BPF_PROG(floor_sys_exit, struct pt_regs* regs, long ret) { return 0; }
