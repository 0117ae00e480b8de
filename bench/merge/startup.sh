#!/bin/bash
# Start-up and small-archive cost (target: `true` <= 90 ms): the wall time of
# `eziotrace -- true` (merged) and `eziotrace record -- true` (kernel only), median of N runs, and
# with -c OTHER_EZIOTRACE (another build's binary, its libeziotrace-preload.so beside it) the same
# for that binary, runs interleaved, and new/other ratios: a before/after measured in one run.
# Not a test: run by hand, as root, on an idle machine.
#
#   bench/merge/startup.sh [-b build-dir] [-n runs] [-c other-eziotrace]
set -euo pipefail

build=build
runs=9
other=
while getopts "b:n:c:" opt; do
  case $opt in
    b) build=$OPTARG ;;
    n) runs=$OPTARG ;;
    c) other=$OPTARG ;;
    *) echo "usage: $0 [-b build-dir] [-n runs] [-c other-eziotrace]" >&2; exit 2 ;;
  esac
done
root=$(cd "$(dirname "$0")/../.." && pwd)
eziotrace=$root/$build/bin/eziotrace
[[ -x $eziotrace ]] || { echo "no $eziotrace: build the eziotrace target first" >&2; exit 1; }
[[ -z $other || -x $other ]] || { echo "-c $other: not an executable" >&2; exit 1; }
[[ $(id -u) == 0 ]] || { echo "eziotrace needs root" >&2; exit 1; }
work=$(mktemp -d /tmp/ezio-startup.XXXXXX)
trap 'rm -rf "$work"' EXIT
export EZIOTRACE_CACHE_DIR=${EZIOTRACE_CACHE_DIR:-$work/cache}
mkdir -m700 -p "$EZIOTRACE_CACHE_DIR"

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# once <binary> <label> [record]: appends the wall time (ms) of one run of `true` to $work/<label>.
once() {
  local bin=$1 label=$2 t0 t1
  shift 2
  rm -rf "$work/out"
  t0=$(date +%s%N)
  (cd "$work" && "$bin" "$@" -o "$work/out" -- true >/dev/null 2>&1) || {
    echo "$bin $*: failed" >&2
    exit 1
  }
  t1=$(date +%s%N)
  echo $(((t1 - t0) / 1000)) | awk '{printf "%.1f\n", $1 / 1000}' >>"$work/$label"
}

bins=("$eziotrace")
[[ -n $other ]] && bins+=("$other")
once "$eziotrace" warmup # the probe cache
for ((r = 0; r < runs; r++)); do
  for i in "${!bins[@]}"; do
    once "${bins[$i]}" "merged.$i"
    once "${bins[$i]}" "record.$i" record
  done
done
printf "%-28s %12s %12s\n" "binary" "-- true ms" "record ms"
for i in "${!bins[@]}"; do
  printf "%-28s %12s %12s\n" "$(basename "$(dirname "$(dirname "${bins[$i]}")")")/$i" \
    "$(median <"$work/merged.$i")" "$(median <"$work/record.$i")"
done
if [[ -n $other ]]; then
  awk -v a="$(median <"$work/merged.0")" -v b="$(median <"$work/merged.1")" \
    -v c="$(median <"$work/record.0")" -v d="$(median <"$work/record.1")" \
    'BEGIN {printf "%-28s %12.2f %12.2f\n", "this/other", a / b, c / d}'
fi
