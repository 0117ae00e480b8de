# SPDX-License-Identifier: GPL-2.0-only
# Guest script of ctest's qemu_record_tracepoints (busybox sh, inside the VM of run-in-vm.sh,
# Debian's 6.1 kernel): with fentry and kprobes denied (EZIOTRACE_DENY_HOOKS), `eziotrace probes`
# must fall back to the derived VFS layer and ext4's tracepoints, and a recording of the layer
# workload must succeed. The events and their nesting are checked on the host (record-layers.sh
# tracepoint) with python3-otf2, from the archive copied out of $EZIO_OUT. The VM has 8 CPUs here
# (record-layers.sh): a thread that moves to the next CPU before each write (migrating_writer)
# has its records in the 8 rings of its session, which the host checks come out whole and in
# time order: recorded in-process, then through an eziotraced of its own (the rings' 8 fds passed
# over its socket).
failed=0
check() {  # check DESCRIPTION COMMAND...
  desc=$1; shift
  if "$@"; then echo "ok   - $desc"; else echo "FAIL - $desc"; failed=1; fi
}
export EZIOTRACE_DENY_HOOKS=fentry,kprobe
eziotrace probes -v > "$EZIO_OUT/probes.txt" 2>&1
cat "$EZIO_OUT/probes.txt"
check "probes: kprobe/ext4_sync_file denied" \
  grep -Eq '^  fs +kprobe/ext4_sync_file +no: kprobe hooks denied' "$EZIO_OUT/probes.txt"
check "probes: VFS derived" grep -Eq '^vfs +derived +derived from tp_btf/sys_exit' "$EZIO_OUT/probes.txt"
check "probes: ext4 uses its tracepoints" grep -Eq \
  '^fs +derived +ext4: tp_btf/ext4_da_write_end,ext4_write_end,ext4_journalled_write_end,ext4_sync_file_enter,ext4_sync_file_exit(;|$)' \
  "$EZIO_OUT/probes.txt"
mkdir -p "$EZIO_DISK/w"
check "record of the workload with all layers succeeds" \
  eziotrace record -o "$EZIO_OUT/trace" -- ezio_layers_workload "$EZIO_DISK/w"
check "8 CPUs online" test "$(grep -c '^processor' /proc/cpuinfo)" = 8
check "record of a thread moving between the 8 CPUs succeeds" \
  eziotrace record -o "$EZIO_OUT/migrate" -- migrating_writer "$EZIO_DISK/w/migrate" 2000
[ -f /etc/group ] || echo "root:x:0:" > /etc/group
mkdir -p /run/ezio-service
eziotraced --foreground --group root --socket /run/ezio-service/eziotraced.sock \
  > "$EZIO_OUT/eziotraced.log" 2>&1 &
daemon=$!
i=0
while [ $i -lt 300 ] && ! grep -q 'eziotraced: ready' "$EZIO_OUT/eziotraced.log"; do
  sleep 0.1; i=$((i + 1))
done
check "eziotraced serves" grep -q 'eziotraced: ready' "$EZIO_OUT/eziotraced.log"
check "record through eziotraced of a thread moving between the 8 CPUs succeeds" \
  eziotrace record --service=/run/ezio-service/eziotraced.sock -o "$EZIO_OUT/migrate-service" \
  -- migrating_writer "$EZIO_DISK/w/migrate-service" 2000
kill $daemon
wait $daemon
[ $failed = 0 ] || cat "$EZIO_OUT/eziotraced.log"
exit $failed
