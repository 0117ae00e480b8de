#!/usr/bin/env bash
# Host side of ctest's qemu_record_layers (MODE fentry) and qemu_record_vfs_kprobe (MODE kprobe):
# runs guest-record-<MODE>.sh in the VM (Debian's 6.1 kernel, which has fentry and kprobes), then
# reads the archive it recorded with python3-otf2 and checks, for the workload
# (tests/layers/layers_workload.cpp), the exact VFS and FS counts and their nesting, that the VFS
# times are the real ones (not derived), and in MODE fentry the page-cache and block layers: their
# events must be there and attributed to the workload's thread.
# usage: record-layers.sh MODE EZIOTRACE WORKLOAD NESTING_PY
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mode=$1 eziotrace=$2 workload=$3 nesting=$4
case "$mode" in
  fentry | kprobe) ;;
  *) echo "record-layers.sh: unknown mode '$mode' (fentry or kprobe)" >&2; exit 2 ;;
esac
out=$(mktemp -d "${TMPDIR:-/tmp}/ezio-qemu-layers.XXXXXX")
trap 'rm -rf "$out"' EXIT
# The guest's own checks (the probes it chose) fail the test, but the archive is still read: its
# checks say more about what went wrong.
guest_status=0
bash "$here/run-in-vm.sh" --timeout 500 --bin "$workload" --out "$out" \
  "$eziotrace" "$here/guest-record-$mode.sh" || guest_status=$?
case $guest_status in
  0 | 1) ;;
  *) echo "FAIL - the VM run failed (status $guest_status, see above)"; exit 1 ;;
esac
archive=$out/trace/eziotrace.otf2
if [ ! -f "$archive" ]; then
  echo "FAIL - no archive was recorded in the VM"; exit 1
fi
summary=$(/usr/bin/python3 "$nesting" "$archive")
d=/mnt/disk/w
facts=$(/usr/bin/python3 "$here/workload_facts.py" "$archive" "$d")
failed=$guest_status
tab=$'\t'
expect() {  # expect LINE: an exact line of nesting.py's output
  if grep -qxF "$1" <<<"$summary"; then echo "ok   - $1"; else echo "FAIL - $1"; failed=1; fi
}
fact() {  # fact LINE: an exact line of workload_facts.py's output
  if grep -qxF "$1" <<<"$facts"; then echo "ok   - $1"; else echo "FAIL - $1"; failed=1; fi
}
probe_is() {  # probe_is LAYER REGEX: EZIOTRACE::PROBE::<LAYER> matches
  local v
  v=$(sed -n "s/^probe${tab}$1${tab}//p" <<<"$summary")
  if grep -Eq "$2" <<<"$v"; then
    echo "ok   - EZIOTRACE::PROBE::$1 = $v"
  else
    echo "FAIL - EZIOTRACE::PROBE::$1 = '$v', expected /$2/"; failed=1
  fi
}

# VFS: 16 writes, 16 reads, one fsync and two opens of data; one open and 4 O_DIRECT pwrites of
# direct. Each inside its syscall, with the real VFS times: strictly within the syscall's.
if [ "$mode" = fentry ]; then
  probe_is vfs '^fentry/fexit vfs_read,vfs_write,.* \(exact\)$'
else
  probe_is vfs '^kprobe/kretprobe vfs_read,vfs_write,vfs_readv,vfs_writev,vfs_iter_read,vfs_iter_write,vfs_fsync_range,vfs_open \(exact\)$'
fi
expect "pair${tab}syscall:write>vfs:vfs_write${tab}16"
expect "pair${tab}syscall:pwrite64>vfs:vfs_write${tab}4"
expect "pair${tab}syscall:fsync>vfs:vfs_fsync_range${tab}1"
expect "vfs${tab}vfs:vfs_write|$d/data|ext4${tab}16"
expect "vfs${tab}vfs:vfs_read|$d/data|ext4${tab}16"
expect "vfs${tab}vfs:vfs_fsync_range|$d/data|ext4${tab}1"
expect "vfs${tab}vfs:vfs_open|$d/data|ext4${tab}2"
expect "vfs${tab}vfs:vfs_write|$d/direct|ext4${tab}4"
fact "derived${tab}0"
fact "inside${tab}vfs:vfs_write|$d/data${tab}16"
fact "inside${tab}vfs:vfs_read|$d/data${tab}16"
fact "inside${tab}vfs:vfs_fsync_range|$d/data${tab}1"
fact "inside${tab}vfs:vfs_open|$d/data${tab}2"
fact "inside${tab}vfs:vfs_write|$d/direct${tab}4"

if [ "$mode" = fentry ]; then
  # FS: fentry on ext4's file operations, nested in the VFS events.
  probe_is fs '^ext4: fentry/fexit'
  expect "pair${tab}vfs:vfs_write>fs:ext4_file_write_iter${tab}20"
  expect "pair${tab}vfs:vfs_read>fs:ext4_file_read_iter${tab}16"
  expect "pair${tab}vfs:vfs_fsync_range>fs:ext4_sync_file${tab}1"
else
  # fentry denied: ext4's tracepoints (6.1 has no iomap_dio_rw_begin: no FS event for direct I/O).
  probe_is fs '^ext4: tp_btf/ext4_da_write_begin'
  expect "pair${tab}vfs:vfs_write>fs:ext4_da_write_begin${tab}16"
  expect "pair${tab}vfs:vfs_fsync_range>fs:ext4_sync_file${tab}1"
fi

if [ "$mode" = fentry ]; then
  # Page cache (6.1 has neither mm_filemap_get_pages nor mm_filemap_fault: no hit or fault
  # counts there). The 16 pages written into the new file are dirtied once each (ext4 has no large
  # folios on 6.1); nothing of the workload's is evicted in its context (new files, no truncate of
  # cached pages).
  probe_is pagecache 'mm_filemap_add_to_page_cache.*mm_filemap_delete_from_page_cache'
  fact "pagecache_threads${tab}1"
  fact "pagecache${tab}pagecache.dirtied${tab}16"
  fact "pagecache${tab}pagecache.evicted${tab}0"
  # Block: every request recorded is the workload thread's. The 4 O_DIRECT pwrites are one 4 KiB
  # write request each, linked to their call; fsync writes back the 16 dirty pages in its own
  # context, linked to it (however the block layer splits them). Journal commits are jbd2's.
  probe_is block 'block_rq_issue.*block_rq_complete'
  fact "block_other_threads${tab}0"
  fact "block_count${tab}pwrite64>write${tab}4"
  fact "block_bytes${tab}pwrite64>write${tab}16384"
  fact "block_bytes${tab}fsync>write${tab}65536"
fi

if grep -q "^error" <<<"$summary"; then
  echo "FAIL - nesting errors:"; grep "^error" <<<"$summary"; failed=1
fi
if [ "$failed" != 0 ]; then
  echo "--- what the archive has:"
  grep -E "^(pair|probe)" <<<"$summary" || true
  echo "$facts"
fi
exit $failed
