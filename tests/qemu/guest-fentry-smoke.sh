# SPDX-License-Identifier: GPL-2.0-only
# Guest script of ctest's qemu_fentry_smoke (busybox sh, inside the VM of run-in-vm.sh): the VM runs
# Debian's 6.1 kernel with BTF and ftrace, and fentry/fexit programs load, attach and count exactly.
failed=0
check() {  # check DESCRIPTION COMMAND...
  desc=$1; shift
  if "$@"; then echo "ok   - $desc"; else echo "FAIL - $desc"; failed=1; fi
}
is_61() { case "$(uname -r)" in 6.1.*) return 0 ;; *) return 1 ;; esac; }
has_ftrace_fn() { grep -Eq "^$1( |\$)" /sys/kernel/tracing/available_filter_functions; }

check "kernel is 6.1 ($(uname -r))" is_61
check "kernel BTF at /sys/kernel/btf/vmlinux" test -s /sys/kernel/btf/vmlinux
check "vfs_read in available_filter_functions" has_ftrace_fn vfs_read
check "vfs_write in available_filter_functions" has_ftrace_fn vfs_write
check "disk $EZIO_DISK_DEV mounted as ext4 at $EZIO_DISK" grep -q "^$EZIO_DISK_DEV $EZIO_DISK ext4 " /proc/mounts
check "fentry/fexit on vfs_write load, attach and count 16 writes" fentry_probe 16

[ $failed -eq 0 ] && echo "qemu fentry smoke: all checks passed"
exit $failed
