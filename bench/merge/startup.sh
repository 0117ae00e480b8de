#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Start-up and small-archive cost (target: `eziotrace -- true` <= 90 ms): the wall time of
#   plain `true`, `eztrace -t posixio true` (EZTrace alone: what the merged mode cannot go below),
#   `eziotrace -- true` (merged, BPF programs loaded in-process), the same through an eziotraced
#   started for the bench on a private socket (its programs already loaded), and
#   `eziotrace record -- true` (kernel only, in-process),
# each the median of N runs, all runs interleaved, with the ratio to EZTrace alone. With
# -c OTHER_EZIOTRACE (another build's binary, its libeziotrace-preload.so and eziotraced beside it)
# the same for that binary, and new/other ratios: a before/after measured in one run.
# Not a test: run by hand, as root; says how loaded the machine was.
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
eziotrace=
for dir in bin recorder; do
  [[ -x $root/$build/$dir/eziotrace ]] && { eziotrace=$root/$build/$dir/eziotrace; break; }
done
[[ -n $eziotrace ]] || { echo "no eziotrace in $build: build the eziotrace target first" >&2; exit 1; }
[[ -z $other || -x $other ]] || { echo "-c $other: not an executable" >&2; exit 1; }
[[ $(id -u) == 0 ]] || { echo "eziotrace needs root" >&2; exit 1; }
command -v eztrace >/dev/null || { echo "no eztrace in PATH" >&2; exit 1; }
work=$(mktemp -d /tmp/ezio-startup.XXXXXX)
chmod 755 "$work"  # eziotraced serves a socket there: its group must reach it
daemons=()
stop_daemons() {
  local pid
  for pid in "${daemons[@]}"; do kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; done
  rm -rf "$work"
}
trap stop_daemons EXIT
mkdir -p "$work/ez"

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# once <label> <command...>: appends the wall time (ms) of one run of the command to $work/<label>.
once() {
  local label=$1 t0 t1
  shift
  rm -rf "$work/out" "$work/ez/true_trace"
  t0=$(date +%s%N)
  (cd "$work/ez" && "$@" >/dev/null 2>&1) || { echo "$*: failed" >&2; exit 1; }
  t1=$(date +%s%N)
  echo $(((t1 - t0) / 1000)) | awk '{printf "%.1f\n", $1 / 1000}' >>"$work/$label"
}

# start_daemon <eziotrace> <socket>: eziotraced of that build on a private socket, once ready.
start_daemon() {
  local daemon i=$3
  daemon=$(dirname "$1")/eziotraced
  [[ -x $daemon ]] || { echo "no $daemon" >&2; exit 1; }
  EZIOTRACE_CACHE_DIR=$work/cache.$i "$daemon" --foreground --socket "$2" --group root >"$2.log" 2>&1 &
  daemons+=($!)
  for _ in $(seq 600); do
    [[ -S $2 ]] && return
    sleep 0.1
  done
  echo "$daemon did not start: $(cat "$2.log")" >&2
  exit 1
}

bins=("$eziotrace")
[[ -n $other ]] && bins+=("$other")
# Each build its own probe cache (its key holds the executable: two builds would replace each
# other's at every run and probe again), filled before the runs.
cached() {
  local i=$1
  shift
  EZIOTRACE_CACHE_DIR=$work/cache.$i "$@"
}
for i in "${!bins[@]}"; do
  mkdir -m700 -p "$work/cache.$i"
  once "warmup.$i" cached "$i" "${bins[$i]}" --no-service -o "$work/out" -- true
  start_daemon "${bins[$i]}" "$work/eziotraced.$i.sock" "$i"
done
echo "machine load before: $(uptime)"
for ((r = 0; r < runs; r++)); do
  once true true
  once eztrace eztrace -t posixio true
  for i in "${!bins[@]}"; do
    once "merged.$i" cached "$i" "${bins[$i]}" --no-service -o "$work/out" -- true
    once "service.$i" cached "$i" "${bins[$i]}" --service="$work/eziotraced.$i.sock" \
      -o "$work/out" -- true
    once "record.$i" cached "$i" "${bins[$i]}" record --no-service -o "$work/out" -- true
  done
done
echo "machine load after:  $(uptime)"

ez=$(median <"$work/eztrace")
printf "%-44s %10s %12s\n" "median of $runs runs, wall" "ms" "/ eztrace"
row() { printf "%-44s %10s %12.2f\n" "$1" "$2" "$(awk -v a="$2" -v b="$ez" 'BEGIN {print a / b}')"; }
row "true" "$(median <"$work/true")"
row "eztrace -t posixio true" "$ez"
for i in "${!bins[@]}"; do
  name=$(basename "$(dirname "$(dirname "${bins[$i]}")")")/$i
  row "$name: eziotrace -- true" "$(median <"$work/merged.$i")"
  row "$name: eziotrace -- true (eziotraced)" "$(median <"$work/service.$i")"
  row "$name: eziotrace record -- true" "$(median <"$work/record.$i")"
done
if [[ -n $other ]]; then
  for what in merged service record; do
    awk -v a="$(median <"$work/$what.0")" -v b="$(median <"$work/$what.1")" -v w="$what" \
      'BEGIN {printf "%-44s %10.2f\n", "this/other " w, a / b}'
  done
fi
