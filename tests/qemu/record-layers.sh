#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Host side of ctest's qemu_record_layers (MODE fentry), qemu_record_vfs_kprobe (MODE kprobe) and
# qemu_record_tracepoints (MODE tracepoint): runs guest-record-<MODE>.sh in the VM (Debian's 6.1
# kernel, which has fentry and kprobes), then reads the archive it recorded with python3-otf2 and
# checks, for the workload (tests/programs/layers_workload.cpp), the VFS and FS events (counts,
# bytes, offsets, results) and their nesting, that the VFS and FS times are the real ones (not
# derived), and in MODE fentry the page-cache and block layers: their events must be there and
# attributed to the workload's thread, and the syscall layer on the syscalls' own functions, whose
# calls must be those of a second recording on the sys_enter/sys_exit tracepoints
# (same_syscalls.py). MODE kprobe denies fentry: VFS and FS must then give the same events through
# kprobes. MODE tracepoint denies kprobes too: derived VFS, ext4's tracepoints.
# MODE tracepoint boots the VM with 8 CPUs and also records MIGRATING_WRITER
# (tests/programs/migrating_writer.c), in-process and through EZIOTRACED (a private one in the
# guest, which passes the session's 8 rings to the client): its calls, spread over the 8 rings
# per CPU, must all be in each archive, in time order, with no loss.
# usage: record-layers.sh MODE EZIOTRACE WORKLOAD OTF2_DUMP_PY [MIGRATING_WRITER EZIOTRACED]
# (OTF2_DUMP_PY: tests/support/otf2_dump.py, beside workload_facts.py)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mode=$1 eziotrace=$2 workload=$3 nesting=$4 migrating=${5:-} eziotraced=${6:-}
# The facts beyond otf2_dump.py --tsv, read through it (tests/support/workload_facts.py).
facts_py=$(dirname "$nesting")/workload_facts.py
case "$mode" in
  fentry | kprobe | tracepoint) ;;
  *) echo "record-layers.sh: unknown mode '$mode' (fentry, kprobe or tracepoint)" >&2; exit 2 ;;
esac
out=$(mktemp -d "${TMPDIR:-/tmp}/ezio-qemu-layers.XXXXXX")
trap 'rm -rf "$out"' EXIT
# The guest's own checks (the probes it chose) fail the test, but the archive is still read: its
# checks say more about what went wrong.
guest_status=0
# bpftool where eziotrace runs it (its libraries come with --bin): the recorder cuts the kernel's
# BTF down with it (recorder/probe/core_btf.cpp), on a kernel with modules here.
bpftool=$(command -v bpftool || echo /usr/sbin/bpftool)
# One vCPU for fentry and kprobes: with two, Debian's 6.1 guest now and then locks up while the
# recorder attaches or detaches its hooks (docs/qemu-test.md, Known issue), and under a loaded
# host (scripts/test.sh's lanes) it once hung with nothing on the console, past any watch.
vm_args=(--smp 1)
if [ "$mode" = tracepoint ]; then
  [ -n "$eziotraced" ] || {
    echo "record-layers.sh: tracepoint needs MIGRATING_WRITER and EZIOTRACED" >&2
    exit 2
  }
  vm_args=(--smp 8 --mem 1536 --bin "$migrating" --bin "$eziotraced")
fi
bash "$here/run-in-vm.sh" --timeout 500 "${vm_args[@]}" --bin "$workload" --out "$out" \
  --bin "$bpftool" --file "$bpftool:$bpftool" \
  "$eziotrace" "$here/guest-record-$mode.sh" || guest_status=$?
case $guest_status in
  0 | 1) ;;
  *) echo "FAIL - the VM run failed (status $guest_status, see above)"; exit 1 ;;
esac
archive=$out/trace/eziotrace.otf2
if [ ! -f "$archive" ]; then
  echo "FAIL - no archive was recorded in the VM"; exit 1
fi
summary_status=0
summary=$(/usr/bin/python3 "$nesting" --tsv "$archive") || summary_status=$?
d=/mnt/disk/w
facts=$(/usr/bin/python3 "$facts_py" "$archive" "$d")
failed=$guest_status
if [ "$summary_status" != 0 ]; then  # a nesting or time-order error, said on stderr
  echo "FAIL - python3-otf2 rejected the archive's nesting or time order"; failed=1
fi
tab=$'\t'
expect() {  # expect LINE: an exact line of otf2_dump.py --tsv
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
# direct. Each inside its syscall, with the real VFS times (strictly within the syscall's) unless
# derived from the syscall.
case $mode in
  fentry) probe_is vfs '^fentry/fexit vfs_read,vfs_write,.* \(exact\)$' ;;
  kprobe) probe_is vfs '^kprobe/kretprobe vfs_read,vfs_write,vfs_readv,vfs_writev,vfs_iter_read,vfs_iter_write,vfs_fsync_range,vfs_open \(exact\)$' ;;
  tracepoint) probe_is vfs '^derived from tp_btf/sys_exit .*\(derived\)$' ;;
esac
expect "pair${tab}syscall:write>vfs:vfs_write${tab}16"
expect "pair${tab}syscall:pwrite64>vfs:vfs_write${tab}4"
expect "pair${tab}syscall:fsync>vfs:vfs_fsync_range${tab}1"
expect "vfs${tab}vfs:vfs_write|$d/data|ext4${tab}16"
expect "vfs${tab}vfs:vfs_read|$d/data|ext4${tab}16"
expect "vfs${tab}vfs:vfs_fsync_range|$d/data|ext4${tab}1"
expect "vfs${tab}vfs:vfs_open|$d/data|ext4${tab}2"
expect "vfs${tab}vfs:vfs_write|$d/direct|ext4${tab}4"
# Opened after a chdir, by a relative path: the kernel's path, not the start directory's.
fact "file${tab}$d/sub/rel${tab}1"
if [ "$mode" != tracepoint ]; then
  fact "derived${tab}0"
  fact "inside${tab}vfs:vfs_write|$d/data${tab}16"
  fact "inside${tab}vfs:vfs_read|$d/data${tab}16"
  fact "inside${tab}vfs:vfs_fsync_range|$d/data${tab}1"
  fact "inside${tab}vfs:vfs_open|$d/data${tab}2"
  fact "inside${tab}vfs:vfs_write|$d/direct${tab}4"
fi
fact "lost${tab}vfs${tab}0"
fact "lost${tab}fs${tab}0"

# FS: ext4's file operations hooked with fentry/fexit, or with fentry denied kprobe/kretprobe; the
# same events either way, one per VFS call on the workload's files, nested syscall > VFS > FS (by
# the syscall's call id), with the real times (strictly inside the VFS event, on its inode) and
# exact bytes and offsets: 16 x 4 KiB written then read at 0, 4096, ... (offsets sum to
# 4096 * 120), fsync of the whole file (no length, offset 0), 4 direct 4 KiB pwrites at 0..12288.
ext4_functions='ext4_file_read_iter,ext4_file_write_iter,ext4_sync_file'
fsync="syscall:fsync>vfs:vfs_fsync_range>fs:ext4_sync_file|$d/data"
if [ "$mode" = tracepoint ]; then
  # ext4's tracepoints: one write_end per page written (each write one page, so one event per
  # call), the sync_file enter/exit pair, no read event; 6.1 has no iomap_dio_rw_begin, so no FS
  # event for direct I/O.
  probe_is fs "^ext4: tp_btf/ext4_da_write_end,ext4_write_end,ext4_journalled_write_end,ext4_sync_file_enter,ext4_sync_file_exit(;| )"
  expect "pair${tab}vfs:vfs_write>fs:ext4_da_write_end${tab}16"
  expect "pair${tab}vfs:vfs_fsync_range>fs:ext4_sync_file${tab}1"
  fact "fs${tab}syscall:write>vfs:vfs_write>fs:ext4_da_write_end|$d/data${tab}16${tab}65536${tab}491520${tab}-"
  fact "fs${tab}$fsync${tab}1${tab}-${tab}-${tab}0"
  fact "fs_inside${tab}$fsync${tab}1"
else
  if [ "$mode" = fentry ]; then
    probe_is fs "^ext4: fentry/fexit $ext4_functions(;| )"
  else
    probe_is fs "^ext4: kprobe/kretprobe $ext4_functions(;| )"
  fi
  expect "pair${tab}vfs:vfs_write>fs:ext4_file_write_iter${tab}20"
  expect "pair${tab}vfs:vfs_read>fs:ext4_file_read_iter${tab}16"
  expect "pair${tab}vfs:vfs_fsync_range>fs:ext4_sync_file${tab}1"
  write="syscall:write>vfs:vfs_write>fs:ext4_file_write_iter|$d/data"
  read="syscall:read>vfs:vfs_read>fs:ext4_file_read_iter|$d/data"
  pwrite="syscall:pwrite64>vfs:vfs_write>fs:ext4_file_write_iter|$d/direct"
  fact "fs${tab}$write${tab}16${tab}65536${tab}491520${tab}65536"
  fact "fs${tab}$read${tab}16${tab}65536${tab}491520${tab}65536"
  fact "fs${tab}$fsync${tab}1${tab}-${tab}0${tab}0"
  fact "fs${tab}$pwrite${tab}4${tab}16384${tab}24576${tab}16384"
  fact "fs_inside${tab}$write${tab}16"
  fact "fs_inside${tab}$read${tab}16"
  fact "fs_inside${tab}$fsync${tab}1"
  fact "fs_inside${tab}$pwrite${tab}4"
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

if [ "$mode" = fentry ]; then
  # The syscall layer on its functions, and with fentry refused on the tracepoints: the same calls.
  probe_is syscall '^fentry/fexit __x64_sys_[{]read,write,.*[}] \(exact\)$'
  tp_archive=$out/trace-tp/eziotrace.otf2
  tp_probe=$(/usr/bin/python3 "$nesting" --tsv "$tp_archive" | sed -n "s/^probe${tab}syscall${tab}//p")
  if [ "$tp_probe" = "tp_btf/sys_enter+sys_exit (exact)" ]; then
    echo "ok   - the second recording's EZIOTRACE::PROBE::syscall = $tp_probe"
  else
    echo "FAIL - the second recording's EZIOTRACE::PROBE::syscall = '$tp_probe'"; failed=1
  fi
  if /usr/bin/python3 "$here/same_syscalls.py" "$archive" "$d" "$tp_archive" /mnt/disk/wt; then
    echo "ok   - the same syscalls recorded by fentry and by the tracepoints"
  else
    echo "FAIL - fentry and the tracepoints recorded different syscalls"; failed=1
  fi
fi

if [ "$mode" = kprobe ]; then
  # The dd storm (guest-record-kprobe.sh): more concurrent calls than kretprobe instances. Each of
  # its 60 ext4_file_write_iter, 60 ext4_sync_file and 60 vfs_fsync_range calls is recorded or
  # counted lost, never dropped silently. A missed return of another VFS function (a read of
  # /dev/zero, an open) is lost too: a successful syscall with no VFS event inside (vfs_unseen).
  storm=$out/storm/eziotrace.otf2
  if [ -f "$storm" ]; then
    storm_facts=$(/usr/bin/python3 "$facts_py" "$storm" /mnt/disk/m)
    total() {  # total KIND REGEX: the sum of the storm's facts KIND whose key matches REGEX
      awk -F'\t' -v k="$1" -v r="$2" '$1 == k && $2 ~ r { n += $3 } END { print n + 0 }' \
        <<<"$storm_facts"
    }
    storm_is() {  # storm_is WHAT SEEN LOST OTHER EXPECTED: SEEN + LOST - OTHER = EXPECTED
      local sum=$(($2 + $3 - $4))
      if [ "$sum" = "$5" ]; then
        echo "ok   - dd storm: $2 $1 events + $3 lost - $4 lost elsewhere = $5"
      else
        echo "FAIL - dd storm: $2 $1 events + $3 lost - $4 lost elsewhere = $sum, expected $5"
        failed=1
      fi
    }
    storm_is FS "$(total fs_count '^fs:(ext4_file_write_iter|ext4_sync_file)$')" \
      "$(total lost '^fs$')" 0 120
    fsync_calls='^syscall:(fsync|fdatasync)$'
    storm_is vfs_fsync_range "$(total vfs_count '^vfs:vfs_fsync_range$')" "$(total lost '^vfs$')" \
      "$(($(total vfs_unseen .) - $(total vfs_unseen "$fsync_calls")))" 60
    sed -n "s/^vfs_unseen${tab}/     no VFS event inside: /p" <<<"$storm_facts"
    [ "$failed" = 0 ] || echo "$storm_facts"
  else
    echo "FAIL - no archive of the dd storm was recorded in the VM"; failed=1
  fi
fi

if [ "$mode" = tracepoint ]; then
  # The rings per CPU (docs/costs.md): 8 rings of 4 MiB, the 2000 writes of one thread that moved
  # before each, once each and in time order (otf2_dump.py also fails on a time-order error), on
  # either path.
  for run in migrate:in-process migrate-service:eziotraced; do
    dir=${run%%:*} path=${run#*:}
    if migrate=$(/usr/bin/python3 "$nesting" "$out/$dir/eziotrace.otf2" | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
p = d["properties"]
calls = [c for loc in d["locations"].values() for c in loc["calls"]]
writes = [c for c in calls if c["name"] == "write" and c.get("syscall.fd") != 1]
ordered = all([c["t0"] for c in loc["calls"]] == sorted(c["t0"] for c in loc["calls"])
              for loc in d["locations"].values())
print(p["EZIOTRACE::RECORDING_PATH"], p["EZIOTRACE::RINGS"], p["EZIOTRACE::RING_BYTES"],
      p["EZIOTRACE::LOST::syscall"], len(writes), int(ordered))'); then
      if [ "$migrate" = "$path 8 4194304 0 2000 1" ]; then
        echo "ok   - $path: 8 rings of 4 MiB, 2000 writes of a migrating thread, none lost, in order"
      else
        echo "FAIL - path, rings, ring bytes, lost, writes, in order: $migrate" \
          "(expected $path 8 4194304 0 2000 1)"
        failed=1
      fi
    else
      echo "FAIL - the migrating writer's archive ($path) could not be read"; failed=1
    fi
  done
fi

if [ "$failed" != 0 ]; then
  echo "--- what the archive has:"
  grep -E "^(pair|probe)" <<<"$summary" || true
  echo "$facts"
fi
exit $failed
