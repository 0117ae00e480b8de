#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Memory and loss against the length of a recording: 1-byte dd (the cheapest syscalls there are,
# more than the recorder can write on a small machine) recorded with all layers at 1, 5 and 20 M
# syscall events. Prints the recorder's peak RSS, its ratio to the recorder's floor
# (`eziotrace record -- true`) and to the 1 M run, all measured in this run, and the events lost.
#   bench/memory/run.sh [BUILD_DIR]     (root; prints figures, asserts nothing)
#   SIZES="1 5 20" (millions of syscall events), RING=32 (--ring-buffer MiB)
set -euo pipefail
build=${1:-$(dirname "$0")/../../build}
ezt=$(realpath "$build/bin/eziotrace")
work=$(mktemp -d /tmp/ezio-bench-memory.XXXXXX)
trap 'rm -rf "$work"' EXIT
sizes=${SIZES:-1 5 20}
ring=${RING:-32}

# Peak RSS (KiB) of a command, from GNU time; the command's stderr goes to $work/log.
peak_kb() { /usr/bin/time -f '%M' -o "$work/rss" "$@" 2>"$work/log"; cat "$work/rss"; }
events() { grep -E '^\s+syscall\s' "$work/log" | awk '{print $2}'; }
lost() { grep -E '^\s+syscall\s' "$work/log" | awk '{print $NF}'; }

floor=$(peak_kb "$ezt" record --ring-buffer "$ring" -o "$work/t0" -- true)
plain_s=$( { TIMEFORMAT=%R; time dd if=/dev/zero of=/dev/null bs=1 count=1000000 status=none; } 2>&1)
printf 'recorder floor (record -- true, --ring-buffer %s): peak RSS %d MB\n' "$ring" $((floor / 1024))
printf 'plain dd bs=1, 2 M syscalls: %s s (%.2f M syscalls/s)\n' "$plain_s" \
  "$(echo "2 / $plain_s" | bc -l)"
printf '%10s %10s %8s %8s %12s %12s %8s %10s %12s\n' "events" "peak MB" "/floor" "/1M run" \
  "recorded" "lost" "lost %" "app s" "M events/s"
first=""
for m in $sizes; do
  count=$((m * 1000000 / 2))  # dd makes a read and a write per byte
  rm -rf "$work/t"
  kb=$(peak_kb "$ezt" record --ring-buffer "$ring" -o "$work/t" -- \
    dd if=/dev/zero of=/dev/null bs=1 count="$count" status=none)
  [ -z "$first" ] && first=$kb
  ev=$(events)
  lost=$(lost)
  app=$(grep -oE 'for [0-9.]+ s' "$work/log" | awk '{print $2}')
  printf '%9sM %10d %8.2f %8.2f %12d %12d %7.1f%% %10.3f %12.2f\n' "$m" $((kb / 1024)) \
    "$(echo "$kb / $floor" | bc -l)" "$(echo "$kb / $first" | bc -l)" "$ev" "$lost" \
    "$(echo "100 * $lost / ($ev + $lost)" | bc -l)" "$app" \
    "$(echo "($ev + $lost) / $app / 1000000" | bc -l)"
done
