#!/bin/bash
# The merge alone (issue 17): records `dd bs=1` of a short and a long length under
# `eziotrace --keep-parts`, then times `eziotrace merge` of the kept parts, each repeated, and
# prints per length the events written, the merge's wall time, events/s and peak RSS
# (/usr/bin/time -v), and the long run's peak RSS over the short one's (flat memory: ~1).
# Not a test: run by hand, as root, on an idle machine.
#
#   bench/merge/merge-only.sh [-b build-dir] [-r repetitions] [-s short-bytes] [-l long-bytes]
set -euo pipefail

build=build
reps=3
short=20000
long=400000
while getopts "b:r:s:l:" opt; do
  case $opt in
    b) build=$OPTARG ;;
    r) reps=$OPTARG ;;
    s) short=$OPTARG ;;
    l) long=$OPTARG ;;
    *) echo "usage: $0 [-b build-dir] [-r repetitions] [-s short-bytes] [-l long-bytes]" >&2; exit 2 ;;
  esac
done
root=$(cd "$(dirname "$0")/../.." && pwd)
eziotrace=$root/$build/recorder/eziotrace
[[ -x $eziotrace ]] || { echo "no $eziotrace: build the eziotrace target first" >&2; exit 1; }
command -v otf2-print >/dev/null || { echo "otf2-print is missing (scripts/setup.sh)" >&2; exit 1; }
[[ $(id -u) == 0 ]] || { echo "eziotrace needs root" >&2; exit 1; }
work=$(mktemp -d /tmp/ezio-merge-only.XXXXXX)
trap 'rm -rf "$work"' EXIT
export EZIOTRACE_CACHE_DIR=${EZIOTRACE_CACHE_DIR:-$work/cache}
mkdir -m700 -p "$EZIOTRACE_CACHE_DIR"

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# measure <name> <bytes>: prints "events wall rss_kb" (medians of the repetitions).
measure() {
  local name=$1 bytes=$2 rec=$work/$1
  (cd "$work" && "$eziotrace" -o "$rec" --keep-parts -- dd if=/dev/zero of="$work/$name.data" \
    bs=1 count="$bytes" >"$work/$name.log" 2>&1) || { cat "$work/$name.log" >&2; return 1; }
  local parts=$rec.parts ezt
  ezt=$(dirname "$(ls -d "$parts"/eztrace/eztrace/*/*_trace | head -1)")
  local events
  events=$(otf2-print "$rec/eziotrace.otf2" 2>/dev/null | grep -cvE '^(=|EVENT|\s|$)' || true)
  : >"$work/$name.runs"
  for ((r = 0; r < reps; r++)); do
    rm -rf "$work/$name.merged"
    local t0 t1
    t0=$(date +%s.%N)
    /usr/bin/time -v -o "$work/time" "$eziotrace" merge "$ezt" \
      --alignment "$parts/eztrace/eziotrace-alignment" "$parts/kernel/eziotrace.otf2" \
      -o "$work/$name.merged" >/dev/null 2>&1
    t1=$(date +%s.%N)
    echo "$(echo "$t1 - $t0" | bc) $(awk -F': ' '/Maximum resident set size/ {print $2}' \
      "$work/time")" >>"$work/$name.runs"
  done
  echo "$events $(awk '{print $1}' "$work/$name.runs" | median)" \
    "$(awk '{print $2}' "$work/$name.runs" | median)"
}

read -r se sw sr <<<"$(measure short "$short")"
read -r le lw lr <<<"$(measure long "$long")"
printf '%-6s %10s %8s %10s %8s\n' run events wall merge/s rss_MB
for row in "short $se $sw $sr" "long $le $lw $lr"; do
  read -r n e w r <<<"$row"
  awk -v n="$n" -v e="$e" -v w="$w" -v r="$r" \
    'BEGIN {printf "%-6s %10d %8.3f %9.2fM %8.1f\n", n, e, w, e / w / 1e6, r / 1024}'
done
awk -v s="$sr" -v l="$lr" 'BEGIN {printf "peak RSS long / short: %.2f\n", l / s}'
