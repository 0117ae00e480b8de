// SPDX-License-Identifier: GPL-2.0-only
// fentry_probe [N]: loads and attaches fentry/fexit programs on vfs_write for this process, does N
// 4 KiB writes to a file in the current directory, and checks that both programs saw exactly those
// writes. Exit 0: fentry and fexit work here; 2: load failed; 3: attach failed; 1: wrong counts.
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "fentry_probe.skel.h"

static int print_libbpf(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, args);
}

int main(int argc, char **argv)
{
	const int n = argc > 1 ? atoi(argv[1]) : 16;
	const size_t block = 4096;
	static char buf[4096];
	struct fentry_probe *skel;
	int err, fd, i, done = 0;

	libbpf_set_print(print_libbpf);
	skel = fentry_probe__open();
	if (!skel) {
		fprintf(stderr, "fentry_probe: open failed: %s\n", strerror(errno));
		return 2;
	}
	skel->rodata->target_tgid = (__u32)getpid();
	err = fentry_probe__load(skel);
	if (err) {
		fprintf(stderr, "fentry_probe: loading fentry/fexit vfs_write failed: %s\n", strerror(-err));
		fentry_probe__destroy(skel);
		return 2;
	}
	err = fentry_probe__attach(skel);
	if (err) {
		fprintf(stderr, "fentry_probe: attaching fentry/fexit vfs_write failed: %s\n", strerror(-err));
		fentry_probe__destroy(skel);
		return 3;
	}

	// Nothing else may write from this process between attach and reading the counters.
	memset(buf, 'e', sizeof(buf));
	fd = open("fentry_probe.out", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	for (i = 0; fd >= 0 && i < n; i++)
		done += write(fd, buf, block) == (ssize_t)block;
	if (fd >= 0)
		close(fd);
	unlink("fentry_probe.out");

	// Snapshot the counters before printing: printing is a write too.
	const struct fentry_probe__bss c = *skel->bss;
	const unsigned long long want_bytes = (unsigned long long)n * block;
	const int ok = done == n && c.entry_calls == (__u64)n && c.exit_calls == (__u64)n &&
		       c.entry_bytes == want_bytes && c.exit_bytes == (__s64)want_bytes;
	printf("fentry/vfs_write: calls=%llu bytes=%llu; fexit/vfs_write: calls=%llu returned=%lld; "
	       "expected %d calls, %llu bytes\n",
	       (unsigned long long)c.entry_calls, (unsigned long long)c.entry_bytes,
	       (unsigned long long)c.exit_calls, (long long)c.exit_bytes, n, want_bytes);
	fentry_probe__destroy(skel);
	return ok ? 0 : 1;
}
