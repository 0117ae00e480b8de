#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The syscall layer's two hook modes compared in the qemu 6.1 guest, where fentry attaches (this
# host's kernel refuses it): boots the guest once (tests/qemu/run-in-vm.sh, under
# /tmp/guests.lock) and runs guest-modes.sh there, then prints each figure and its ratio to the
# same calls with no BPF in the same boot (TCG's absolute figures are not the hardware's).
#   bench/hooks/qemu.sh [BUILD_DIR]     (root; prints figures, asserts nothing)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(realpath "${1:-$here/../../build}")
ezt=$build/bin/eziotrace
cost=$build/bench/hooks/ezio_bench_hook_cost
for f in "$ezt" "$cost"; do
  [[ -x $f ]] || { echo "no $f: build the eziotrace and ezio_bench_hook_cost targets first" >&2; exit 1; }
done
out=$(mktemp -d /tmp/ezio-hooks-qemu.XXXXXX)
trap 'rm -rf "$out"' EXIT
# One vCPU, as the recorder's fentry tests boot (docs/qemu-test.md, Known issue).
flock /tmp/guests.lock nice bash "$here/../../tests/qemu/run-in-vm.sh" --smp 1 --timeout 1500 \
  --bin "$cost" --out "$out" "$ezt" "$here/guest-modes.sh" | tee "$out/figures.txt"
fig() { awk -v m="$1" -v w="$2" '$1 == m && $2 == w {print $3}' "$out/figures.txt"; }
row() {  # row LABEL MODE WHAT BASE
  local v base
  v=$(fig "$2" "$3") base=$(fig none "$4")
  printf '  %-44s %9.1f ns  x%.2f\n' "$1" "$v" "$(echo "$v / $base" | bc -l)"
}
echo
echo "qemu 6.1 guest (TCG, 1 vCPU), fastest batch of 5000 calls; ratio to the same call without BPF"
row "no BPF: write(fd, buf, 1) to /dev/null" none write write
row "no BPF: getppid()" none getppid getppid
for mode in fentry tracepoint; do
  row "$mode: traced write, --layers syscall" $mode traced-write write
  row "$mode: another process's getppid()" $mode other-getppid getppid
  row "$mode: another process's write" $mode other-write write
done
