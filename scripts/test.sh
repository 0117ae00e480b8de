#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Quick start command 2: set up, build, run the whole test suite (real BPF on this kernel: needs root).
# With arguments, they go to one ctest run as they are (e.g. `-R merge`, `-L qemu`).
# Without, two lanes run side by side: the qemu guests (one vCPU of emulation each, minutes of
# boot and guest work) next to the ordinary tests, one test at a time in each lane (the ordinary
# tests share the service's socket, loop devices and cgroups: never two at once); then the virtual
# cluster alone (its guests want both cores). The suite's time is then the guests', not their sum.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test
bash scripts/build.sh test
cd build
run_ctest() { ctest --output-on-failure --timeout 900 "$@"; }
if [ $# -gt 0 ]; then
  run_ctest "$@"
  exit
fi
failed=()
# The guests' lane prints as it goes, each line marked, so a slow boot is seen while it runs.
(run_ctest -L qemu 2>&1 | sed -u 's/^/[qemu lane] /'; exit "${PIPESTATUS[0]}") &
qemu_lane=$!
run_ctest -LE 'qemu|cluster' || failed+=("ordinary tests")
wait "$qemu_lane" || failed+=("qemu tests")
run_ctest -L cluster || failed+=("cluster tests")
if [ ${#failed[@]} -gt 0 ]; then
  echo "scripts/test.sh: failed: ${failed[*]} (each lane's summary above)" >&2
  exit 8
fi
echo "scripts/test.sh: every lane passed"
