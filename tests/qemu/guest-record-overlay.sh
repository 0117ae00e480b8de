# SPDX-License-Identifier: GPL-2.0-only
# Guest script of ctest's qemu_record_overlay (busybox sh, inside the VM of run-in-vm.sh --module
# overlay, Debian's 6.1 kernel): an overlayfs mount whose lower, upper and work dirs are on the
# ext4 disk, and one recording of the same dd workload into and out of a file of it with the exact
# VFS hooks on fentry/fexit, then one with fentry denied (kprobe/kretprobe). overlayfs calls the
# VFS again on its backing file (ovl_write_iter -> vfs_iter_write, ovl_fsync -> vfs_fsync_range):
# record-overlay.sh checks on the host that each application call still gives exactly one VFS
# event, on the overlay file, and that nothing is counted lost.
failed=0
check() {  # check DESCRIPTION COMMAND...
  desc=$1; shift
  if "$@"; then echo "ok   - $desc"; else echo "FAIL - $desc"; failed=1; fi
}
o=$EZIO_DISK/ovl
mkdir -p "$o/lower" "$o/upper" "$o/work" "$o/merged"
check "mount -t overlay" mount -t overlay overlay \
  -o "lowerdir=$o/lower,upperdir=$o/upper,workdir=$o/work" "$o/merged"
export EZIOTRACE_CACHE_DIR=/tmp/ezio-cache  # this initramfs has no /run
# 19 writes of 4 KiB and an fsync into a new overlay file, then 19 reads of it.
workload='dd if=/dev/zero of="$1/f" bs=4k count=19 conv=fsync 2>/dev/null &&
  dd if="$1/f" of=/dev/null bs=4k count=19 2>/dev/null'
record() {  # record MODE: the workload into $EZIO_OUT/MODE, the file $o/merged/MODE/f
  mkdir -p "$o/merged/$1"
  eziotrace record --no-probe-cache --layers syscall,vfs,fs -o "$EZIO_OUT/$1" -- \
    sh -c "$workload" sh "$o/merged/$1"
}
check "record with fentry/fexit VFS hooks succeeds" record fentry
record_kprobe() (
  export EZIOTRACE_DENY_HOOKS=fentry
  record kprobe
)
check "record with kprobe/kretprobe VFS hooks (fentry denied) succeeds" record_kprobe
exit $failed
