# SPDX-License-Identifier: GPL-2.0-only
# Guest script of ctest's qemu_record_layers (busybox sh, inside the VM of run-in-vm.sh, Debian's
# 6.1 kernel): `eziotrace probes` must choose fentry/fexit for the syscall, VFS and ext4 layers and find the
# page-cache and block tracepoints, and a recording of the layer workload with every layer (the
# default) must succeed. The counts are checked on the host (record-layers.sh fentry) with
# python3-otf2, from the archive copied out of $EZIO_OUT.
failed=0
check() {  # check DESCRIPTION COMMAND...
  desc=$1; shift
  if "$@"; then echo "ok   - $desc"; else echo "FAIL - $desc"; failed=1; fi
}
eziotrace probes -v > "$EZIO_OUT/probes.txt" 2>&1
cat "$EZIO_OUT/probes.txt"
# The syscall layer on the recorded syscalls' own functions (bpf/hooks.h, EZIO_SYSCALL_FUNCTIONS).
check "probes: syscalls use fentry/fexit on their functions" grep -Eq \
  '^syscall +exact +fentry/fexit __x64_sys_[{]read,write,.*,dup3[}]' "$EZIO_OUT/probes.txt"
check "probes: VFS uses fentry/fexit" grep -Eq '^vfs +exact +fentry/fexit vfs_read,vfs_write' "$EZIO_OUT/probes.txt"
check "probes: ext4 uses fentry/fexit" grep -Eq \
  '^fs +exact +ext4: fentry/fexit ext4_file_read_iter,ext4_file_write_iter,ext4_sync_file(;|$)' \
  "$EZIO_OUT/probes.txt"
check "probes: page cache hooks mm_filemap_add_to_page_cache" \
  grep -Eq '^pagecache .*tp_btf/mm_filemap_add_to_page_cache' "$EZIO_OUT/probes.txt"
# 6.1's balance_dirty_pages has 12 arguments (8 since 6.10): the recording below loads the
# program of that layout (bpf/pagecache.bpf.h, ezio_pc_throttle_12).
check "probes: page cache hooks balance_dirty_pages and sched_switch" \
  grep -Eq '^pagecache .*balance_dirty_pages,sched_switch' "$EZIO_OUT/probes.txt"
check "probes: block hooks block_rq_issue and block_rq_complete" \
  grep -Eq '^block .*block_rq_issue,block_rq_complete' "$EZIO_OUT/probes.txt"
mkdir -p "$EZIO_DISK/w"
export EZIOTRACE_CACHE_DIR=/tmp/ezio-cache  # this initramfs has no /run
check "record of the workload with all layers succeeds" \
  eziotrace record -o "$EZIO_OUT/trace" -- ezio_layers_workload "$EZIO_DISK/w"
# The first recording kept its fentry plan (recorder/probe/kernel_cache.h): the next one loads it as is.
eziotrace record -v -o /tmp/again -- true > /tmp/again.log 2>&1
grep -E 'hooks|loaded and attached|cut-down|probe cache|probing again|attach points' /tmp/again.log
check "a second recording takes the kept fentry plan" grep -q 'hooks taken from the probe cache' \
  /tmp/again.log
check "and loads it without probing again" sh -c '! grep -q "probing again" /tmp/again.log'
check "with the kernel types cut down by bpftool" grep -q 'kernel types cut down' /tmp/again.log
check "and the fentry/tp_btf attach points kept" grep -q 'attach points from' /tmp/again.log
# The syscalls' entries share one body by tail calls, their exits another
# (bpf/syscall_functions.bpf.h), each verified once.
grep -o 'the verifier went through .*' /tmp/again.log
grep -o 'BPF programs attached in .*' /tmp/again.log
check "the syscall entries and exits tail-call their shared bodies" sh -c \
  "grep -Eq '[0-9]+ entries by tail call: [0-9]+' /tmp/again.log &&
   grep -Eq '1 shared entry body: [0-9]+' /tmp/again.log &&
   grep -Eq '[0-9]+ exits by tail call: [0-9]+' /tmp/again.log &&
   grep -Eq '1 shared exit body: [0-9]+' /tmp/again.log"
# A syscall exit that finds its shared body missing (bpf/syscall_functions.bpf.h) loses the call,
# counted: the body taken out of its table while a recording runs (as nothing but a bug of the
# recorder would), dd's 400 one-byte calls after it are all in the syscall layer's lost column,
# and the advice says the archive is incomplete.
rm -f /tmp/go /tmp/waiting
eziotrace record --layers syscall -o /tmp/nobody -- sh -c \
  'touch /tmp/waiting; while [ ! -e /tmp/go ]; do sleep 0.1; done; dd if=/dev/zero of=/dev/null bs=1 count=200' \
  >/tmp/nobody.log 2>&1 &
rec=$!
for _ in $(seq 1 600); do [ -e /tmp/waiting ] && break; sleep 0.1; done
emptied=0
for id in $(bpftool map show name sc_exit_bodies | sed -n 's/^\([0-9]*\): prog_array.*/\1/p'); do
  bpftool map delete id "$id" key 0 0 0 0 && emptied=$((emptied + 1))
done
touch /tmp/go
wait $rec
cat /tmp/nobody.log
lost=$(awk '$1 == "syscall" {print $NF}' /tmp/nobody.log)
check "the exit bodies' table emptied while recording ($emptied table(s))" [ "$emptied" -ge 1 ]
check "every call after it counted lost in the syscall layer (${lost:-none} >= 400)" \
  [ "${lost:-0}" -ge 400 ]
check "the advice says events were lost" sh -c 'eziotrace advise /tmp/nobody 2>/dev/null | grep -q "Events were lost while recording"'
rm -rf /tmp/nobody /tmp/go /tmp/waiting
# The same workload with fentry and kprobes refused: the syscall layer on the sys_enter/sys_exit
# tracepoints. The host compares its syscalls with the first recording's (same_syscalls.py).
mkdir -p "$EZIO_DISK/wt"
check "record of the workload on the syscall tracepoints succeeds" \
  env EZIOTRACE_DENY_HOOKS=fentry,kprobe eziotrace record --no-probe-cache -o "$EZIO_OUT/trace-tp" \
  -- ezio_layers_workload "$EZIO_DISK/wt"
exit $failed
