#!/usr/bin/env bash
# Host side of ctest's qemu_record_layers: runs guest-record-layers.sh in the VM (Debian's 6.1
# kernel, where fentry works), then reads the archive it recorded with python3-otf2 and checks the
# exact VFS and FS counts of the workload (tests/layers/layers_workload.cpp) and that they nest.
# usage: record-layers.sh EZIOTRACE WORKLOAD NESTING_PY
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
eziotrace=$1 workload=$2 nesting=$3
out=$(mktemp -d "${TMPDIR:-/tmp}/ezio-qemu-layers.XXXXXX")
trap 'rm -rf "$out"' EXIT
bash "$here/run-in-vm.sh" --timeout 500 --bin "$workload" --out "$out" \
  "$eziotrace" "$here/guest-record-layers.sh"
summary=$(/usr/bin/python3 "$nesting" "$out/trace/eziotrace.otf2")
failed=0
expect() {  # expect LINE: an exact line of nesting.py's output
  if grep -qxF "$1" <<<"$summary"; then echo "ok   - $1"; else echo "FAIL - $1"; failed=1; fi
}
tab=$'\t'
d=/mnt/disk/w
expect "pair${tab}syscall:write>vfs:vfs_write${tab}16"
expect "pair${tab}syscall:pwrite64>vfs:vfs_write${tab}4"
expect "pair${tab}syscall:fsync>vfs:vfs_fsync_range${tab}1"
expect "vfs${tab}vfs:vfs_write|$d/data|ext4${tab}16"
expect "vfs${tab}vfs:vfs_read|$d/data|ext4${tab}16"
expect "vfs${tab}vfs:vfs_write|$d/direct|ext4${tab}4"
expect "pair${tab}vfs:vfs_write>fs:ext4_file_write_iter${tab}20"
expect "pair${tab}vfs:vfs_read>fs:ext4_file_read_iter${tab}16"
expect "pair${tab}vfs:vfs_fsync_range>fs:ext4_sync_file${tab}1"
if grep -q "^error" <<<"$summary"; then
  echo "FAIL - nesting errors:"; grep "^error" <<<"$summary"; failed=1
fi
grep "^probe" <<<"$summary" || true
exit $failed
