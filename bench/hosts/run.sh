#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# merge-hosts at scale (docs/cluster.md, section 3): one synthetic host's archive of EVENTS events
# (bench/analyzers/gen_archive.cpp) replicated as H hosts' parts (hard links, each with an
# eziotrace-clock.json naming its own host and an offset of H milliseconds), merged for each H
# both ways in the same run: assembled (the default: the parts' event files linked, definitions
# only handled) and the full merge (`--rewrite-events`: every event read and rewritten), each
# `--no-check`; then `eziotrace check` on the largest assembled archive (its reader applies the
# mapping tables and clock offsets to every event). Prints wall time, peak RSS and events/s per H
# and mode, and the ratios to one host merged the same way in the same run: time per host and
# peak memory should stay flat as H grows.
# A benchmark, not a test: it asserts nothing.
#
# Usage: bench/hosts/run.sh [BUILD_DIR] [EVENTS_PER_HOST] [HOSTS...]
#        (defaults: build, 1000000, 8 16 32 64)
# Environment: EZIO_BENCH_DIR (scratch space, default a fresh mktemp -d, removed at the end).
# Disk: one part (~16 MiB per million events) and the largest fully merged archive (H parts'
# worth; the assembled one shares the parts' event files).
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
events=${2:-1000000}
shift $(($# > 2 ? 2 : $#))
hosts=("$@")
[[ ${#hosts[@]} -gt 0 ]] || hosts=(8 16 32 64)
gen=$build/bench/analyzers/ezio_bench_gen_archive
ezt=$build/bin/eziotrace
for tool in "$gen" "$ezt" /usr/bin/time; do
  [[ -x $tool ]] || { echo "run.sh: missing $tool (build eziotrace and ezio_bench_gen_archive)" >&2; exit 1; }
done

# shellcheck source=../measure.sh
source "$root/bench/measure.sh"

"$gen" "$scratch/part" "$events" >/dev/null
part_events=$("$ezt" layers --json "$scratch/part" | python3 -c 'import json,sys; print(json.load(sys.stdin)["meta"]["events"])')
echo "one part: $part_events events, $(du -sm "$scratch/part" | cut -f1) MiB"

# parts H: host0..host{H-1}, host0 the reference (offset 0), host i i ms behind it.
make_parts() {
  local n=$1 i
  rm -rf "$scratch/parts"
  mkdir -p "$scratch/parts"
  for ((i = 0; i < n; i++)); do
    cp -al "$scratch/part" "$scratch/parts/h$i"
    printf '{"reference":"host0","host":"host%d","start":{"offset_ns":%d,"error_ns":5000,"at_ns":0,"rounds":200},"end":{"offset_ns":%d,"error_ns":5000,"at_ns":1000000000,"rounds":200}}\n' \
      "$i" $((i * 1000000)) $((i * 1000000 + 3000)) >"$scratch/parts/h$i/eziotrace-clock.json"
  done
}

# merge H MODE: MODE "assembled" (default) or "rewritten" (--rewrite-events).
merge() {
  local n=$1 mode=$2 flags=()
  [[ $mode == rewritten ]] && flags=(--rewrite-events)
  make_parts "$n"
  rm -rf "$scratch/out"
  measure "$ezt" merge-hosts --no-check "${flags[@]}" -o "$scratch/out" "$scratch"/parts/h*
}

declare -A base_s base_kb
for mode in assembled rewritten; do
  read -r s kb < <(merge 1 "$mode")
  base_s[$mode]=$s base_kb[$mode]=$kb
  printf '%-9s hosts %3d: %9d events %7.2f s %5d MiB %11.0f events/s (baseline)\n' "$mode" 1 \
    "$part_events" "$s" $((kb / 1024)) "$(echo "$part_events / $s" | bc -l)"
done
for n in "${hosts[@]}"; do
  for mode in rewritten assembled; do  # the assembled archive last: checked below
    read -r s kb < <(merge "$n" "$mode")
    total=$((n * part_events))
    printf '%-9s hosts %3d: %9d events %7.2f s %5d MiB %11.0f events/s | time per host %.2fx, memory %.2fx its baseline\n' \
      "$mode" "$n" "$total" "$s" $((kb / 1024)) "$(echo "$total / $s" | bc -l)" \
      "$(echo "$s / $n / ${base_s[$mode]}" | bc -l)" "$(echo "$kb / ${base_kb[$mode]}" | bc -l)"
    [[ $mode == assembled ]] && printf '  assembled / rewritten time at %d hosts: %.4f\n' "$n" "$(echo "$s / $prev" | bc -l)"
    prev=$s
  done
done
size=$(du -sm "$scratch/out" | cut -f1)
read -r cs ckb < <(measure "$ezt" check "$scratch/out")
printf 'check of the %d-host assembled archive (%d MiB): %.2f s %d MiB %.0f events/s\n' "${hosts[-1]}" "$size" \
  "$cs" $((ckb / 1024)) "$(echo "${hosts[-1]} * $part_events / $cs" | bc -l)"
