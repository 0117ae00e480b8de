#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The merged mode against issue #31's target (dd 4 KiB <= 2.0x plain, fio buffered 1 job <= 1.4x,
# no tail after the application beyond writing definitions): each workload plain, under EZTrace
# alone (`eztrace -t posixio`, the merged mode's default module), under `eziotrace record` (the
# kernel side alone), merged (`eziotrace -- cmd`) with this build and with another (-c, e.g. the
# previous main's build/bin/eziotrace), interleaved in each repetition. Per tool, medians: wall,
# ratio to plain, CPU (user + system of everything it waited for), the application's time as
# eziotrace reports it (EZTrace's start-up and finalization included), eziotrace's start-up
# before it (wall - app - tail) and the tail (from the -v
# log's stamped "the application ended" to the exit: the rest of the kernel archive, the merge,
# the read-back and publication). Then, for merged runs, the tail's steps from the -v log, and
# what of the merged run's extra time over plain EZTrace alone accounts for. Not a test: run by
# hand, as root, on an idle machine.
#
#   bench/merge/target.sh [-b build-dir] [-r repetitions] [-w dd,fio1] [-n dd-blocks] [-c other-eziotrace]
set -euo pipefail

build=build
reps=5
workloads=dd,fio1
blocks=100000
other=
while getopts "b:r:w:n:c:" opt; do
  case $opt in
    b) build=$OPTARG ;;
    r) reps=$OPTARG ;;
    w) workloads=$OPTARG ;;
    n) blocks=$OPTARG ;;
    c) other=$OPTARG ;;
    *) echo "usage: $0 [-b build-dir] [-r reps] [-w dd,fio1] [-n dd-blocks] [-c other-eziotrace]" >&2
      exit 2 ;;
  esac
done
source "$(dirname "$0")/preflight.sh"
bench_preflight "$build" "$other" fio eztrace perl bc /usr/bin/time
work=$(mktemp -d /tmp/ezio-merge-target.XXXXXX)
trap 'rm -rf "$work"' EXIT
export EZIOTRACE_CACHE_DIR=${EZIOTRACE_CACHE_DIR:-$work/cache}
# The other build keeps its probe cache apart: the cache holds one build's plan, and each build
# run after the other would probe the kernel again (~0.3 s more at its start gate).
other_cache=$EZIOTRACE_CACHE_DIR.other
mkdir -m700 -p "$EZIOTRACE_CACHE_DIR" "$other_cache" "$work/data" "$work/steps"

workload() {
  case $1 in
    dd) echo "dd if=/dev/zero of=$work/data/dd.out bs=4k count=$blocks" ;;
    fio1) echo "fio --name=w --rw=write --ioengine=sync --bs=4k --thread --numjobs=1" \
      "--size=100M --directory=$work/data --group_reporting --output=/dev/null" ;;
    *) echo "unknown workload $1" >&2; exit 2 ;;
  esac
}

# run <tool> <workload> <command...>: appends "wall cpu app tail" to $work/<tool>.<workload> and
# the merge's -v steps ("step seconds" lines) to $work/steps/<tool>.<workload>.
run() {
  local tool=$1 name=$2
  shift 2
  local out=$work/out cmd
  rm -rf "$work/data"/* "$out" "$out.parts" "$work"/*_trace
  sync
  case $tool in
    plain) cmd=("$@") ;;
    eztrace) cmd=(env EZTRACE_TRACE_DIR="$work" eztrace -t posixio "$@") ;;
    record) cmd=("$eziotrace" record -v -o "$out" -- "$@") ;;
    merged) cmd=("$eziotrace" -v -o "$out" -- "$@") ;;
    merged-c) cmd=(env EZIOTRACE_CACHE_DIR="$other_cache" "$other" -v -o "$out" -- "$@") ;;
  esac
  local t0 t1
  t0=$(date +%s.%N)
  /usr/bin/time -f '%U %S' -o "$work/time" "${cmd[@]}" 2>&1 >/dev/null |
    perl -MTime::HiRes=time -ne '$| = 1; printf "%.6f %s", time, $_' >"$work/log" || {
    cat "$work/log" >&2
    return 1
  }
  t1=$(date +%s.%N)
  local wall cpu app ended tail=0
  wall=$(echo "$t1 - $t0" | bc)
  cpu=$(awk '{print $1 + $2}' "$work/time")
  app=$(sed -n 's/.*recorded .* for \([0-9.]*\) s (.*/\1/p' "$work/log" | tail -1)
  app=${app:-$wall}
  ended=$(sed -n 's/^\([0-9.]*\) .*the application ended$/\1/p' "$work/log" | tail -1)
  [[ -z $ended ]] || tail=$(echo "$t1 - $ended" | bc)
  echo "$wall $cpu $app $tail" >>"$work/$tool.$name"
  sed -n 's/^[0-9.]* eziotrace: \(archive finished\) in \([0-9.]*\) s after the application.*/\1 \2/p;
    s/^[0-9.]* eziotrace: merge: \(.*\) in \([0-9.]*\) s.*/\1 \2/p' "$work/log" |
    sed 's/ (.*)//; s/ /_/g; s/_\([0-9.]*\)$/ \1/' >>"$work/steps/$tool.$name"
  # The application held at the start gate while the kernel side loads (docs/merge.md, Start-up):
  # part of its time, not EZTrace's.
  sed -n 's/.*start gate: the application reached it \([0-9.]*\) ms after its exec, the kernel side filtered on it after \([0-9.]*\) ms.*/\1 \2/p' \
    "$work/log" | awk '{w = ($2 - $1) / 1000; print "gate_wait", (w > 0 ? w : 0)}' \
    >>"$work/steps/$tool.$name"
}

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
column_median() { awk -v c="$2" '{print $c}' "$1" | median; }

IFS=, read -ra names <<<"$workloads"
tools=(plain eztrace record merged)
[[ -z $other ]] || tools+=(merged-c)
for ((r = 0; r < reps; r++)); do
  for name in "${names[@]}"; do
    read -ra cmd <<<"$(workload "$name")"
    for tool in "${tools[@]}"; do run "$tool" "$name" "${cmd[@]}"; done
  done
done

uptime
printf '%-6s %-9s %8s %6s %8s %6s %8s %8s %8s\n' workload tool wall ratio cpu ratio app start tail
for name in "${names[@]}"; do
  plain=$(column_median "$work/plain.$name" 1)
  plain_cpu=$(column_median "$work/plain.$name" 2)
  for tool in "${tools[@]}"; do
    f=$work/$tool.$name
    wall=$(column_median "$f" 1) app=$(column_median "$f" 3) tail=$(column_median "$f" 4)
    start=$(echo "s = $wall - $app - $tail; if (s < 0) s = 0; s" | bc -l)
    printf '%-6s %-9s %8.3f %6.2f %8.3f %6.2f %8.3f %8.3f %8.3f\n' "$name" "$tool" "$wall" \
      "$(echo "$wall / $plain" | bc -l)" "$(column_median "$f" 2)" \
      "$(echo "$(column_median "$f" 2) / $plain_cpu" | bc -l)" "$app" "$start" "$tail"
  done
done

echo
echo "the tail's steps (medians, s; the merge's kernel index runs beside EZTrace's read):"
for name in "${names[@]}"; do
  for tool in merged merged-c; do
    f=$work/steps/$tool.$name
    [[ -s $f ]] || continue
    printf '%-6s %-9s' "$name" "$tool"
    for step in $(awk '{print $1}' "$f" | awk '!seen[$0]++'); do
      printf ' %s=%.3f' "$step" "$(awk -v s="$step" '$1 == s {print $2}' "$f" | median)"
    done
    echo
  done
done

echo
target() { case $1 in dd) echo 2.0 ;; fio1) echo 1.4 ;; esac; }
for name in "${names[@]}"; do
  plain=$(column_median "$work/plain.$name" 1)
  ez=$(column_median "$work/eztrace.$name" 1)
  merged=$(column_median "$work/merged.$name" 1)
  app=$(column_median "$work/merged.$name" 3)
  tail=$(column_median "$work/merged.$name" 4)
  gate=$(awk '$1 == "gate_wait" {print $2}' "$work/steps/merged.$name" | median)
  awk -v n="$name" -v p="$plain" -v e="$ez" -v m="$merged" -v a="$app" -v t="$tail" \
    -v w="${gate:-0}" -v g="$(target "$name")" 'BEGIN {
      x = m - p; s = m - a - t; if (s < 0) s = 0; k = a - e - w
      printf "%s: merged %.2fx plain (target <= %sx), EZTrace alone %.2fx. The merged run'"'"'s %.3f s over plain: EZTrace alone %.3f s (%.0f %%); the application held at the start gate while the kernel side loads %.3f s (%.0f %%); the kernel side during the rest of the application (its time minus those) %.3f s (%.0f %%); eziotrace'"'"'s start-up before it %.3f s (%.0f %%); the tail %.3f s (%.0f %%)\n",
        n, m / p, g, e / p, x, e - p, 100 * (e - p) / x, w, 100 * w / x, k, 100 * k / x,
        s, 100 * s / x, t, 100 * t / x }'
done
