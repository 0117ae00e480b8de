#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Timeline export benchmark: a synthetic archive (bench/analyzers/gen_archive.cpp, 10 M events by
# default) exported to Pajé and to Perfetto JSON, each timed against `otf2-print --silent` on the
# same archive in the same run (wall time and peak RSS from /usr/bin/time -v), then the ratios;
# and the same at a tenth of the size, to show that memory does not grow with the trace.
# A benchmark, not a test: it asserts nothing. Target: within 3x of otf2-print, memory flat.
#
# Usage: bench/view/run.sh [BUILD_DIR] [EVENTS]   (BUILD_DIR defaults to build)
# Environment: EZIO_BENCH_DIR (scratch space, default a fresh mktemp -d, removed at the end).
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
events=${2:-10000000}
gen=$build/bench/analyzers/ezio_bench_gen_archive
ezt=$build/bin/eziotrace
for tool in "$gen" "$ezt" /usr/bin/time; do
  [[ -x $tool ]] || { echo "run.sh: missing $tool (build eziotrace and ezio_bench_gen_archive)" >&2; exit 1; }
done
command -v otf2-print >/dev/null || { echo "run.sh: otf2-print not found" >&2; exit 1; }

# shellcheck source=../measure.sh
source "$root/bench/measure.sh"

for n in $((events / 10)) "$events"; do
  dir=$scratch/a$n
  rm -rf "$dir"
  "$gen" "$dir" "$n" >/dev/null
  anchor=$dir/eziotrace.otf2
  rm -f "$scratch/o.trace" "$scratch/o.json"
  read -r base_s base_kb < <(measure otf2-print --silent "$anchor")
  read -r paje_s paje_kb < <(measure "$ezt" export --format paje "$anchor" -o "$scratch/o.trace" --max-events 0)
  read -r perf_s perf_kb < <(measure "$ezt" export --format perfetto "$anchor" -o "$scratch/o.json" --max-events 0)
  printf '%s events: otf2-print --silent %.2f s %d MiB | paje %.2f s (%.2fx) %d MiB, %d MiB file | perfetto %.2f s (%.2fx) %d MiB, %d MiB file\n' \
    "$n" "$base_s" $((base_kb / 1024)) "$paje_s" "$(echo "$paje_s / $base_s" | bc -l)" $((paje_kb / 1024)) \
    $(($(stat -c %s "$scratch/o.trace") >> 20)) "$perf_s" "$(echo "$perf_s / $base_s" | bc -l)" \
    $((perf_kb / 1024)) $(($(stat -c %s "$scratch/o.json") >> 20))
done
