#!/usr/bin/env bash
# Syscall-layer overhead: 4 KiB buffered writes into the page cache (dd), plain vs `eziotrace record`,
# measured in the same run; then the highest event rate recorded without loss.
#   bench/syscall/run.sh [BUILD_DIR]     (root; prints figures, asserts nothing)
set -euo pipefail
build=${1:-$(dirname "$0")/../../build}
ezt=$(realpath "$build/recorder/eziotrace")
work=$(mktemp -d /tmp/ezio-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
count=${COUNT:-300000}
reps=${REPS:-5}

now() { date +%s.%N; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

# The syscall layer alone (the other layers have their own benchmark, bench/fio).
plain=() traced=() app=()
for i in $(seq "$reps"); do
  t0=$(now); dd if=/dev/zero of="$work/f" bs=4k count="$count" status=none; t1=$(now)
  plain+=("$(echo "$t1 - $t0" | bc -l)")
  rm -rf "$work/t"
  t0=$(now)
  "$ezt" record --layers syscall -o "$work/t" -- dd if=/dev/zero of="$work/f" bs=4k count="$count" status=none 2>"$work/log"
  t1=$(now)
  traced+=("$(echo "$t1 - $t0" | bc -l)")
  app+=("$(grep -oE 'for [0-9.]+ s' "$work/log" | awk '{print $2}')")
done
p=$(printf '%s\n' "${plain[@]}" | median)
t=$(printf '%s\n' "${traced[@]}" | median)
a=$(printf '%s\n' "${app[@]}" | median)
lost=$(grep -E '^\s+syscall' "$work/log" | awk '{print $NF}')
events=$(grep -E '^\s+syscall' "$work/log" | awk '{print $2}')
printf 'dd 4 KiB buffered writes, %d writes + %d reads, median of %d runs\n' "$count" "$count" "$reps"
printf '  plain            %8.3f s\n' "$p"
printf '  eziotrace record %8.3f s   wall: loading, recording, archive written\n' "$t"
printf '    of which dd    %8.3f s   from its release to its exit, under recording\n' "$a"
printf '  ratio, wall      %8.3f x   (target <= 1.15)\n' "$(echo "$t / $p" | bc -l)"
printf '  ratio, dd alone  %8.3f x\n' "$(echo "$a / $p" | bc -l)"
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
