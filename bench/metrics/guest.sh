#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# bench/metrics/run.py in the qemu 6.1 guest (tests/qemu/run-in-vm.sh --systemd: this host's own
# root, Debian's 6.1 kernel, where fentry attaches), so that the metrics' fentry path is measured
# beside plain runs, the tracepoint path (fentry refused) and bpftrace, interleaved in one boot.
# One vCPU, niced. The guest is TCG (no KVM): absolute times are the emulator's, the ratios and ns
# added per call are what to compare, and only within one run.
#
#   bench/metrics/guest.sh [-b build-dir] [run.py options...]
# default run.py options: --modes plain,metrics-tp,metrics,bpftrace --targets /dev/null,file,1MiB
#   --fio --export --no-stats -r 3 -n 200000 (the files on the guest's ext4 disk)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
build=$repo/build
if [ "${1:-}" = -b ]; then build=$(cd "$2" && pwd); shift 2; fi
opts=("$@")
[ ${#opts[@]} -gt 0 ] || opts=(--modes plain,metrics-tp,metrics,bpftrace
  --targets /dev/null,file,1MiB --fio --export --no-stats -r 3 -n 200000)
[ -x "$build/bin/eziotraced" ] || { echo "guest.sh: build eziotraced first ($build/bin)" >&2; exit 2; }
script=$(mktemp /tmp/ezio-bench-guest.XXXXXX.sh)
trap 'rm -f "$script"' EXIT
# The guest sees this host's root read-only (9p): the repository and the build at the same paths.
# First the checks of qemu_systemd_install's metrics part (guest-metrics-fentry.sh): fentry is
# chosen and exact there, the tracepoint path too; then the bench.
{
  echo "failed=0 prefix=$(printf %q "$build/bin") EZIO_FILES=$(printf %q "$repo/tests/qemu")"
  echo 'ok() { echo "ok   - $*"; }; bad() { echo "FAIL - $*"; failed=1; }'
  echo 'check() { local d=$1; shift; if "$@"; then ok "$d"; else bad "$d"; fi; }'
  echo 'limit() { timeout --kill-after=5 300 "$@"; }'
  printf '. %q\n' "$repo/tests/qemu/guest-metrics-fentry.sh"
  echo "cd /tmp"
  printf '/usr/bin/python3 %q -b %q --dir /mnt/disk' "$here/run.py" "$build"
  printf ' %q' "${opts[@]}"
  echo
  echo 'exit $failed'
}>"$script"
exec nice -n 10 bash "$repo/tests/qemu/run-in-vm.sh" --systemd --smp 1 --mem 1536 --disk-mb 3072 --module xfs \
  --timeout ${EZIO_BENCH_TIMEOUT:-3000} - "$script"
