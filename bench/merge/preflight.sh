# SPDX-License-Identifier: GPL-2.0-only
# Sourced by the merge benches: the checks each one makes before its first run, in one place.
# bench_preflight BUILD OTHER TOOL...: sets `root` (the checkout) and `eziotrace` (BUILD's), fails
# with a message when it is not built, OTHER (an eziotrace to compare with, may be empty) is not an
# executable, a TOOL is missing, or we are not root.
bench_preflight() {
  local build=$1 other=$2 tool
  shift 2
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  eziotrace=$root/$build/bin/eziotrace
  [[ -x $eziotrace ]] || { echo "no $eziotrace: build the eziotrace target first" >&2; exit 1; }
  [[ -z $other || -x $other ]] || { echo "-c $other: not an executable" >&2; exit 1; }
  for tool in "$@"; do
    command -v "$tool" >/dev/null || { echo "$tool is missing (scripts/setup.sh)" >&2; exit 1; }
  done
  [[ $(id -u) == 0 ]] || { echo "eziotrace needs root" >&2; exit 1; }
}
