#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Syscall-layer overhead: 4 KiB buffered writes into the page cache (dd), plain vs `eziotrace record`,
# measured in the same run; then the highest event rate recorded without loss.
#   bench/syscall/run.sh [BUILD_DIR]     (root; prints figures, asserts nothing)
set -euo pipefail
build=${1:-$(dirname "$0")/../../build}
ezt=$(realpath "$build/bin/eziotrace")
work=$(mktemp -d /tmp/ezio-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
count=${COUNT:-300000}
reps=${REPS:-5}

now() { date +%s.%N; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

# The syscall layer alone (the other layers have their own benchmark, bench/fio).
plain=() traced=() app=() plain_cpu=() app_cpu=()
TIMEFORMAT='%3U %3S'  # bash's `time`: dd's user and system CPU seconds
# Each run starts with the previous one's file gone and nothing dirty left: writeback of the last
# run's 1.2 GB would otherwise run under the next one (and once made the plain runs the slower).
clean() { rm -rf "$work/f" "$work/t"; sync; }
for i in $(seq "$reps"); do
  clean
  t0=$(now)
  { time dd if=/dev/zero of="$work/f" bs=4k count="$count" status=none; } 2>"$work/cpu"
  t1=$(now)
  plain+=("$(echo "$t1 - $t0" | bc -l)")
  plain_cpu+=("$(awk '{print $1 + $2}' "$work/cpu")")
  clean
  t0=$(now)
  "$ezt" record --layers syscall -o "$work/t" -- dd if=/dev/zero of="$work/f" bs=4k count="$count" status=none 2>"$work/log"
  t1=$(now)
  traced+=("$(echo "$t1 - $t0" | bc -l)")
  app+=("$(grep -oE 'for [0-9.]+ s' "$work/log" | awk '{print $2}')")
  app_cpu+=("$(grep -oE '[0-9.]+ s of CPU' "$work/log" | awk '{print $1}')")
done
p=$(printf '%s\n' "${plain[@]}" | median)
t=$(printf '%s\n' "${traced[@]}" | median)
a=$(printf '%s\n' "${app[@]}" | median)
# On a shared VM the plain time itself drifts by tens of percent within minutes: each recorded run
# is compared with the plain run just before it, and the best runs with each other (the least
# disturbed ones), next to the ratio of medians.
pairs=() pairs_app=()
for i in "${!plain[@]}"; do
  pairs+=("$(echo "${traced[$i]} / ${plain[$i]}" | bc -l)")
  pairs_app+=("$(echo "${app[$i]} / ${plain[$i]}" | bc -l)")
done
best() { sort -g | head -n 1; }
pb=$(printf '%s\n' "${plain[@]}" | best)
tb=$(printf '%s\n' "${traced[@]}" | best)
ab=$(printf '%s\n' "${app[@]}" | best)
pc=$(printf '%s\n' "${plain_cpu[@]}" | median)
ac=$(printf '%s\n' "${app_cpu[@]}" | median)
lost=$(grep -E '^\s+syscall' "$work/log" | awk '{print $NF}')
events=$(grep -E '^\s+syscall' "$work/log" | awk '{print $2}')
printf 'dd 4 KiB buffered writes, %d writes + %d reads, median of %d runs\n' "$count" "$count" "$reps"
printf '  plain            %8.3f s\n' "$p"
printf '  eziotrace record %8.3f s   wall: loading, recording, archive written\n' "$t"
printf '    of which dd    %8.3f s   from its release to its exit, under recording\n' "$a"
printf '  ratio, wall      %8.3f x   (target <= 1.15)  paired median %.3f x, best runs %.3f x\n' \
  "$(echo "$t / $p" | bc -l)" "$(printf '%s\n' "${pairs[@]}" | median)" "$(echo "$tb / $pb" | bc -l)"
printf '  ratio, dd alone  %8.3f x                    paired median %.3f x, best runs %.3f x\n' \
  "$(echo "$a / $p" | bc -l)" "$(printf '%s\n' "${pairs_app[@]}" | median)" "$(echo "$ab / $pb" | bc -l)"
printf '  ratio, dd CPU     %8.3f x   (%.3f s of CPU under recording, %.3f s plain; steadier than wall time on a shared host)\n' \
  "$(echo "$ac / $pc" | bc -l)" "$ac" "$pc"
printf '  syscall events   %8d, lost %s\n' "$events" "$lost"

# Highest rate: 1-byte copies are the cheapest syscalls there are; the recorder must keep up.
for n in 500000 1000000 2000000; do
  rm -rf "$work/t"
  t0=$(now)
  "$ezt" record --layers syscall -o "$work/t" -- dd if=/dev/zero of=/dev/null bs=1 count="$n" status=none 2>"$work/log"
  t1=$(now)
  ev=$(grep -E '^\s+syscall' "$work/log" | awk '{print $2}')
  ls=$(grep -E '^\s+syscall' "$work/log" | awk '{print $NF}')
  rec=$(grep -oE 'for [0-9.]+ s' "$work/log" | awk '{print $2}')
  printf '  rate test: %8d events in %6.3f s of application time = %6.2f M events/s, lost %s\n' \
    "$ev" "$rec" "$(echo "$ev / $rec / 1000000" | bc -l)" "$ls"
done
