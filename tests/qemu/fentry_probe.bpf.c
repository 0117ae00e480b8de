// SPDX-License-Identifier: GPL-2.0-only
// Counts vfs_write calls of one process with fentry, and the bytes they returned with fexit.
// Built by tests/qemu/CMakeLists.txt; run inside the qemu VM by guest-fentry-smoke.sh.
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

const volatile __u32 target_tgid = 0;

__u64 entry_calls = 0;
__u64 entry_bytes = 0;  // sum of the count argument
__u64 exit_calls = 0;
__s64 exit_bytes = 0;   // sum of the return values

static __always_inline int is_target(void)
{
	return (__u32)(bpf_get_current_pid_tgid() >> 32) == target_tgid;
}

SEC("fentry/vfs_write")
int BPF_PROG(vfs_write_entry, struct file *file, const char *buf, size_t count, loff_t *pos)
{
	if (!is_target())
		return 0;
	__sync_fetch_and_add(&entry_calls, 1);
	__sync_fetch_and_add(&entry_bytes, count);
	return 0;
}

SEC("fexit/vfs_write")
int BPF_PROG(vfs_write_exit, struct file *file, const char *buf, size_t count, loff_t *pos, ssize_t ret)
{
	if (!is_target())
		return 0;
	__sync_fetch_and_add(&exit_calls, 1);
	__sync_fetch_and_add(&exit_bytes, ret);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";  // fentry/fexit programs must be GPL-compatible
