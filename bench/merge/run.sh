#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The main command's cost: each workload runs plain, under `eziotrace record` (all
# layers), under `eziotrace -- cmd` (EZTrace + kernel layers, merged) and under `eztrace -t posixio`
# alone, interleaved in each repetition so that the ratios compare like with like. Per tool: wall
# time, the application's own time (what eziotrace reports for it), the time after the
# application ended (`after`: the rest of the kernel archive, and in merged mode the merge, up to
# the archive published; from the time the -v log's "the application ended" was printed), the
# start-up before it (`start`: wall - app - after),
# merge events/s (events of the archive over `after`: a lower bound of the merge's own rate),
# peak RSS (/usr/bin/time -v) and archive bytes per event. With -c OTHER_EZIOTRACE (another
# build's binary, its libeziotrace-preload.so beside it) `record` and `merged` also run with it
# (rows `record-c`, `merged-c`), interleaved: a before/after measured in one run. Not a test: run
# by hand, as root, on an idle machine; the medians of the repetitions are printed with their
# ratio to plain.
#
#   bench/merge/run.sh [-b build-dir] [-r repetitions] [-w workload,...] [-c other-eziotrace]
#   workloads: dd (dd bs=4k count=200000 to a file), fio1 and fio4 (fio buffered 100 MiB, 1 and 4
#   jobs, --thread), tar (tar of /usr/share/doc to /dev/null), true
set -euo pipefail

build=build
reps=3
workloads=dd,fio1,fio4,tar,true
other=
while getopts "b:r:w:c:" opt; do
  case $opt in
    b) build=$OPTARG ;;
    r) reps=$OPTARG ;;
    w) workloads=$OPTARG ;;
    c) other=$OPTARG ;;
    *) echo "usage: $0 [-b build-dir] [-r repetitions] [-w workload,...] [-c other-eziotrace]" >&2
      exit 2 ;;
  esac
done
source "$(dirname "$0")/preflight.sh"
bench_preflight "$build" "$other" fio eztrace tar otf2-print perl /usr/bin/time
work=$(mktemp -d /tmp/ezio-merge-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
export EZIOTRACE_CACHE_DIR=${EZIOTRACE_CACHE_DIR:-$work/cache}
# The other build keeps its probe cache apart: the cache holds one build's plan, and each build
# run after the other would probe the kernel again (~0.3 s more before the application).
other_cache=$EZIOTRACE_CACHE_DIR.other
mkdir -m700 -p "$EZIOTRACE_CACHE_DIR" "$other_cache" "$work/data"

workload() {
  case $1 in
    dd) echo "dd if=/dev/zero of=$work/data/dd.out bs=4k count=200000" ;;
    fio1 | fio4)
      echo "fio --name=w --rw=write --ioengine=sync --bs=4k --thread --numjobs=${1#fio}" \
        "--size=100M --directory=$work/data --group_reporting --output=/dev/null" ;;
    tar) echo "tar -cf /dev/null /usr/share/doc" ;;
    true) echo "true" ;;
    *) echo "unknown workload $1" >&2; exit 2 ;;
  esac
}

# run <tool> <workload command...>: one measured run; appends "wall rss_kb app events bytes after"
# to $work/<tool>.<workload>. eziotrace's log lines are stamped with the time they were printed.
run() {
  local tool=$1 name=$2
  shift 2
  local out=$work/out
  rm -rf "$work/data"/* "$out" "$out.parts" "$work"/*_trace
  sync
  local cmd
  case $tool in
    plain) cmd=("$@") ;;
    record) cmd=("$eziotrace" record -v -o "$out" -- "$@") ;;
    merged) cmd=("$eziotrace" -v -o "$out" -- "$@") ;;
    record-c) cmd=(env EZIOTRACE_CACHE_DIR="$other_cache" "$other" record -v -o "$out" -- "$@") ;;
    merged-c) cmd=(env EZIOTRACE_CACHE_DIR="$other_cache" "$other" -v -o "$out" -- "$@") ;;
    eztrace) cmd=(env EZTRACE_TRACE_DIR="$work" eztrace -t posixio "$@") ;;
  esac
  local t0 t1
  t0=$(date +%s.%N)
  /usr/bin/time -v -o "$work/time" "${cmd[@]}" 2>&1 >/dev/null |
    perl -MTime::HiRes=time -ne '$| = 1; printf "%.6f %s", time, $_' >"$work/log" || {
    cat "$work/log" >&2
    return 1
  }
  t1=$(date +%s.%N)
  local wall rss app events=0 bytes=0 after=0 ended
  wall=$(echo "$t1 - $t0" | bc)
  rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$work/time")
  app=$(sed -n 's/.*recorded .* for \([0-9.]*\) s (.*/\1/p' "$work/log" | tail -1)
  app=${app:-$wall}
  # The time after the application: from the -v log's "the application ended", stamped; a build
  # without that line: from "archive finished in X s after the application", X s before its stamp
  # (that leaves out unhooking the programs and the last drains, 10-40 ms: they count in `start`).
  ended=$(sed -n 's/^\([0-9.]*\) .*the application ended$/\1/p' "$work/log" | tail -1)
  if [[ -z $ended ]]; then
    ended=$(sed -n 's/^\([0-9.]*\) .*archive finished in \([0-9.]*\) s after the application.*/\1 - \2/p' \
      "$work/log" | tail -1)
  fi
  [[ -z $ended ]] || after=$(echo "$t1 - ($ended)" | bc)
  if [[ -f $out/eziotrace.otf2 ]]; then
    events=$(otf2-print "$out/eziotrace.otf2" 2>/dev/null | grep -cvE '^(=|EVENT|\s|$)' || true)
    bytes=$(du -sb "$out" | cut -f1)
  fi
  echo "$wall $rss $app $events $bytes $after" >>"$work/$tool.$name"
}

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
column_median() { awk -v c="$2" '{print $c}' "$1" | median; }

IFS=, read -ra names <<<"$workloads"
tools=(plain record merged eztrace)
[[ -z $other ]] || tools=(plain record record-c merged merged-c eztrace)
for ((r = 0; r < reps; r++)); do
  for name in "${names[@]}"; do
    read -ra cmd <<<"$(workload "$name")"
    for tool in "${tools[@]}"; do run "$tool" "$name" "${cmd[@]}"; done
  done
done

uptime
printf '%-6s %-8s %8s %6s %8s %8s %8s %10s %10s %9s %8s\n' workload tool wall ratio app after \
  start events merge/s rss_MB B/event
for name in "${names[@]}"; do
  plain=$(column_median "$work/plain.$name" 1)
  for tool in "${tools[@]}"; do
    f=$work/$tool.$name
    wall=$(column_median "$f" 1)
    rss=$(column_median "$f" 2)
    app=$(column_median "$f" 3)
    events=$(column_median "$f" 4)
    bytes=$(column_median "$f" 5)
    after=$(column_median "$f" 6)
    awk -v n="$name" -v t="$tool" -v w="$wall" -v p="$plain" -v a="$app" -v e="$events" \
      -v b="$bytes" -v r="$rss" -v f="$after" 'BEGIN {
        start = w - a - f; if (start < 0) start = 0
        rate = (e > 0 && f > 0) ? sprintf("%.2fM", e / f / 1e6) : "-"
        bpe = e > 0 ? sprintf("%.1f", b / e) : "-"
        printf "%-6s %-8s %8.3f %6.2f %8.3f %8.3f %8.3f %10d %10s %9.1f %8s\n",
               n, t, w, w / p, a, f, start, e, rate, r / 1024, bpe }'
  done
done
