#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The merge alone: records `dd bs=1` of a short and a long length under
# `eziotrace --keep-parts`, then times `eziotrace merge` of the kept parts, each repeated, and
# prints per length the events written, the merge's wall time, events/s, its CPU time (user +
# system: steadier than wall on a shared machine) and events per CPU second, and peak RSS
# (/usr/bin/time -v), and the long run's peak RSS over the short one's (flat memory: ~1).
# With -c OTHER_EZIOTRACE (another build's binary, its libeziotrace-preload.so beside it) the same
# recordings are merged by both, repetitions interleaved, and a row per binary is printed: a
# before/after measured in one run. Not a test: run by hand, as root, on an idle machine.
#
#   bench/merge/merge-only.sh [-b build-dir] [-r repetitions] [-s short-bytes] [-l long-bytes]
#                             [-c other-eziotrace]
set -euo pipefail

build=build
reps=3
short=20000
long=400000
other=
while getopts "b:r:s:l:c:" opt; do
  case $opt in
    b) build=$OPTARG ;;
    r) reps=$OPTARG ;;
    s) short=$OPTARG ;;
    l) long=$OPTARG ;;
    c) other=$OPTARG ;;
    *) echo "usage: $0 [-b build-dir] [-r repetitions] [-s short-bytes] [-l long-bytes]" \
      "[-c other-eziotrace]" >&2; exit 2 ;;
  esac
done
source "$(dirname "$0")/preflight.sh"
bench_preflight "$build" "$other" otf2-print
work=$(mktemp -d /tmp/ezio-merge-only.XXXXXX)
trap 'rm -rf "$work"' EXIT
export EZIOTRACE_CACHE_DIR=${EZIOTRACE_CACHE_DIR:-$work/cache}
mkdir -m700 -p "$EZIOTRACE_CACHE_DIR"

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# record <name> <bytes>: a recording of dd under `eziotrace --keep-parts`, and its event count.
record() {
  local name=$1 bytes=$2 rec=$work/$1
  (cd "$work" && "$eziotrace" -o "$rec" --keep-parts -- dd if=/dev/zero of="$work/$name.data" \
    bs=1 count="$bytes" >"$work/$name.log" 2>&1) || { cat "$work/$name.log" >&2; return 1; }
  otf2-print "$rec/eziotrace.otf2" 2>/dev/null | grep -cvE '^(=|EVENT|\s|$)' || true
}

# merge_once <binary> <name> <runs-file>: appends "wall cpu rss_kb" of one merge of the parts.
merge_once() {
  local bin=$1 name=$2 parts=$work/$2.parts ezt
  ezt=$(dirname "$(ls -d "$parts"/eztrace/eztrace/*/*_trace | head -1)")
  rm -rf "$work/$name.merged"
  local t0 t1
  t0=$(date +%s.%N)
  /usr/bin/time -v -o "$work/time" "$bin" merge "$ezt" \
    --alignment "$parts/eztrace/eziotrace-alignment" "$parts/kernel/eziotrace.otf2" \
    -o "$work/$name.merged" >/dev/null 2>&1
  t1=$(date +%s.%N)
  echo "$(echo "$t1 - $t0" | bc) $(awk -F': ' '/(User|System) time/ {s += $2} END {print s}' \
    "$work/time") $(awk -F': ' '/Maximum resident set size/ {print $2}' "$work/time")" >>"$3"
}

# measure <name> <bytes>: prints "events wall cpu rss_kb" per binary (medians of the repetitions),
# one line for this build, then one for the other binary when there is one.
measure() {
  local name=$1 events
  events=$(record "$name" "$2")
  : >"$work/$name.runs"
  : >"$work/$name.other"
  for ((r = 0; r < reps; r++)); do
    merge_once "$eziotrace" "$name" "$work/$name.runs"
    [[ -z $other ]] || merge_once "$other" "$name" "$work/$name.other"
  done
  for f in "$work/$name.runs" ${other:+"$work/$name.other"}; do
    echo "$events $(awk '{print $1}' "$f" | median) $(awk '{print $2}' "$f" | median)" \
      "$(awk '{print $3}' "$f" | median)"
  done
}

rows=()
for length in short long; do
  bytes=$short
  [[ $length == long ]] && bytes=$long
  label=("$length" "$length-other")
  i=0
  while read -r e w u r; do
    rows+=("${label[$i]} $e $w $u $r")
    i=$((i + 1))
  done < <(measure "$length" "$bytes")
done
printf '%-12s %10s %8s %10s %8s %10s %8s\n' run events wall merge/s cpu_s merge/cpu_s rss_MB
for row in "${rows[@]}"; do
  read -r n e w u r <<<"$row"
  awk -v n="$n" -v e="$e" -v w="$w" -v u="$u" -v r="$r" 'BEGIN {
    printf "%-12s %10d %8.3f %9.2fM %8.3f %9.2fM %8.1f\n", n, e, w, e / w / 1e6, u, e / u / 1e6,
      r / 1024 }'
done
read -r _ _ _ _ sr <<<"${rows[0]}"
read -r _ _ _ _ lr <<<"${rows[$((${#rows[@]} / 2))]}"
awk -v s="$sr" -v l="$lr" 'BEGIN {printf "peak RSS long / short: %.2f\n", l / s}'
