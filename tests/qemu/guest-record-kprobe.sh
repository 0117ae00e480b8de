# Guest script of ctest's qemu_record_vfs_kprobe (busybox sh, inside the VM of run-in-vm.sh,
# Debian's 6.1 kernel, which has fentry and kprobes): with fentry denied (EZIOTRACE_DENY_HOOKS),
# `eziotrace probes` must choose kprobe/kretprobe for every VFS function, having really attached
# them, and a recording of the layer workload must succeed. The counts and the nesting are checked
# on the host (record-layers.sh kprobe) with python3-otf2, from the archive copied out of $EZIO_OUT.
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
mkdir -p "$EZIO_DISK/w"
check "record of the workload with all layers succeeds" \
  eziotrace record -o "$EZIO_OUT/trace" -- ezio_layers_workload "$EZIO_DISK/w"
exit $failed
