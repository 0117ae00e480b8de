# SPDX-License-Identifier: GPL-2.0-only
# Guest script of ctest's qemu_record_vfs_kprobe (busybox sh, inside the VM of run-in-vm.sh,
# Debian's 6.1 kernel, which has fentry and kprobes): with fentry denied (EZIOTRACE_DENY_HOOKS),
# `eziotrace probes` must choose kprobe/kretprobe for every VFS function and for ext4's three file
# operations, having really attached them, and a recording of the layer workload must succeed.
# The events, their bytes and their nesting are checked on the host (record-layers.sh kprobe) with
# python3-otf2, from the archive copied out of $EZIO_OUT.
failed=0
check() {  # check DESCRIPTION COMMAND...
  desc=$1; shift
  if "$@"; then echo "ok   - $desc"; else echo "FAIL - $desc"; failed=1; fi
}
export EZIOTRACE_DENY_HOOKS=fentry
eziotrace probes -v > "$EZIO_OUT/probes.txt" 2>&1
cat "$EZIO_OUT/probes.txt"
check "probes: fentry denied" grep -Eq '^  vfs +fentry/vfs_read +no: fentry hooks denied' "$EZIO_OUT/probes.txt"
check "probes: kretprobe/vfs_open attached" grep -Eq '^  vfs +kretprobe/vfs_open +ok$' "$EZIO_OUT/probes.txt"
check "probes: VFS uses kprobe/kretprobe on all eight functions" grep -Eq \
  '^vfs +exact +kprobe/kretprobe vfs_read,vfs_write,vfs_readv,vfs_writev,vfs_iter_read,vfs_iter_write,vfs_fsync_range,vfs_open$' \
  "$EZIO_OUT/probes.txt"
check "probes: fentry/ext4_file_write_iter denied" \
  grep -Eq '^  fs +fentry/ext4_file_write_iter +no: fentry hooks denied' "$EZIO_OUT/probes.txt"
check "probes: kretprobe/ext4_sync_file attached" \
  grep -Eq '^  fs +kretprobe/ext4_sync_file +ok$' "$EZIO_OUT/probes.txt"
check "probes: ext4 uses kprobe/kretprobe on its three file operations" grep -Eq \
  '^fs +exact +ext4: kprobe/kretprobe ext4_file_read_iter,ext4_file_write_iter,ext4_sync_file(;|$)' \
  "$EZIO_OUT/probes.txt"
mkdir -p "$EZIO_DISK/w"
check "record of the workload with all layers succeeds" \
  eziotrace record -o "$EZIO_OUT/trace" -- ezio_layers_workload "$EZIO_DISK/w"
# 60 processes writing and fsyncing at once outnumber the kretprobe instances of vfs_fsync_range,
# ext4_sync_file and often vfs_write, ext4_file_write_iter (10 each on one or two CPUs): returns go unseen,
# and each must come out as a lost VFS or FS event (record-layers.sh), most of them only at the
# exit of their dd, which makes no next call.
mkdir -p "$EZIO_DISK/m"
check "record of 60 concurrent dd conv=fsync succeeds" \
  eziotrace record --layers syscall,vfs,fs -o "$EZIO_OUT/storm" -- sh -c '
    cd "$1" || exit 1
    i=0
    while [ $i -lt 60 ]; do
      dd if=/dev/zero of=f$i bs=256k count=1 conv=fsync 2>/dev/null &
      i=$((i + 1))
    done
    wait' sh "$EZIO_DISK/m"
exit $failed
