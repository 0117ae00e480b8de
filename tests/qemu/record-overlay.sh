#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Host side of ctest's qemu_record_overlay: runs guest-record-overlay.sh in the VM (Debian's 6.1
# kernel, overlay module loaded), then reads its two recordings (VFS hooks on fentry/fexit, then on
# kprobe/kretprobe) with python3-otf2. overlayfs calls the VFS again on the backing file of each
# call: the application's 19 writes, fsync and 19 reads must each be one VFS event, on the overlay
# file (the path dd opened), none on the backing file, nothing counted lost; ext4's work under
# them (the upper file) once per call.
# usage: record-overlay.sh EZIOTRACE OTF2_DUMP_PY (tests/support/otf2_dump.py, beside
# workload_facts.py)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
eziotrace=$1 dump_py=$2
facts_py=$(dirname "$dump_py")/workload_facts.py
out=$(mktemp -d "${TMPDIR:-/tmp}/ezio-qemu-overlay.XXXXXX")
trap 'rm -rf "$out"' EXIT
guest_status=0
bash "$here/run-in-vm.sh" --timeout 500 --module overlay --out "$out" \
  "$eziotrace" "$here/guest-record-overlay.sh" || guest_status=$?
case $guest_status in
  0 | 1) ;;
  *) echo "FAIL - the VM run failed (status $guest_status, see above)"; exit 1 ;;
esac
failed=$guest_status
tab=$'\t'
has() {  # has WHAT TEXT LINE: LINE is an exact line of TEXT
  if grep -qxF "$3" <<<"$2"; then echo "ok   - $1: $3"; else echo "FAIL - $1: $3"; failed=1; fi
}
for mode in fentry kprobe; do
  archive=$out/$mode/eziotrace.otf2
  if [ ! -f "$archive" ]; then
    echo "FAIL - $mode: no archive was recorded in the VM"; failed=1; continue
  fi
  summary=$(/usr/bin/python3 "$dump_py" --tsv "$archive") || {
    echo "FAIL - $mode: python3-otf2 rejected the archive's nesting or time order"; failed=1
  }
  m=/mnt/disk/ovl/merged/$mode
  facts=$(/usr/bin/python3 "$facts_py" "$archive" "$m")
  probe=$(sed -n "s/^probe${tab}vfs${tab}//p" <<<"$summary")
  case $mode in
    fentry) want='^fentry/fexit vfs_read,vfs_write,' ;;
    kprobe) want='^kprobe/kretprobe vfs_read,vfs_write,' ;;
  esac
  if grep -Eq "$want" <<<"$probe"; then
    echo "ok   - $mode: EZIOTRACE::PROBE::vfs = $probe"
  else
    echo "FAIL - $mode: EZIOTRACE::PROBE::vfs = '$probe', expected /$want/"; failed=1
  fi
  # Every VFS event under the overlay mount (its merged, upper and work dirs): the application's
  # calls on the overlay file and nothing else (the upper file's calls are overlayfs's own).
  ovl_vfs=$(grep -F "${tab}vfs:" <<<"$summary" | grep -F '|/mnt/disk/ovl/' | sort || true)
  expected=$(printf 'vfs\tvfs:vfs_%s|%s/f|overlay\t%s\n' fsync_range "$m" 1 open "$m" 2 \
    read "$m" 19 write "$m" 19 | sort)
  if [ "$ovl_vfs" = "$expected" ]; then
    echo "ok   - $mode: one VFS event per call, on the overlay file"
  else
    echo "FAIL - $mode: the VFS events under the overlay mount are"; echo "$ovl_vfs"
    echo "       expected"; echo "$expected"; failed=1
  fi
  has "$mode" "$facts" "lost${tab}vfs${tab}0"
  has "$mode" "$facts" "lost${tab}fs${tab}0"
  # ext4 under overlayfs: once per call, nested in the application's VFS event (19 x 4 KiB at
  # offsets 0, 4096, ... 73728: 4096 * 171 in all).
  has "$mode" "$facts" \
    "fs${tab}syscall:write>vfs:vfs_write>fs:ext4_file_write_iter|$m/f${tab}19${tab}77824${tab}700416${tab}77824"
  has "$mode" "$facts" \
    "fs${tab}syscall:read>vfs:vfs_read>fs:ext4_file_read_iter|$m/f${tab}19${tab}77824${tab}700416${tab}77824"
  has "$mode" "$facts" "fs${tab}syscall:fsync>vfs:vfs_fsync_range>fs:ext4_sync_file|$m/f${tab}1${tab}-${tab}0${tab}0"
  if [ "$failed" != 0 ]; then
    echo "--- $mode: what the archive has:"; echo "$summary"; echo "$facts"
  fi
done
exit $failed
