#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Analyzer benchmark: generates synthetic archives of 5 M and 50 M events and times each analyzer
# (profile, layers, files, latency, advise, report) against `otf2-print --silent` on the same
# archive in the same run (wall time and peak RSS from /usr/bin/time -v), then prints the ratios.
# Targets: report within 3x of otf2-print's time, memory flat from 5 M to 50 M events.
# A benchmark, not a test: it asserts nothing.
#
# Usage: bench/analyzers/run.sh [BUILD_DIR] [SIZES...]
#   BUILD_DIR  defaults to build-analysis; it must hold the ezio_bench_gen_archive target and
#              either bin/eziotrace or tests/ezio_analyze_cli (the analyzers' driver).
#   SIZES      event counts, default "5000000 50000000".
# Environment: EZIO_BENCH_DIR (scratch space, default a fresh mktemp -d, removed at the end),
#              EZIOTRACE (the binary to time, overrides the lookup in BUILD_DIR).
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build-analysis}
shift || true
sizes=("$@")
[[ ${#sizes[@]} -gt 0 ]] || sizes=(5000000 50000000)

gen=$build/bench/analyzers/ezio_bench_gen_archive
if [[ -z ${EZIOTRACE:-} ]]; then
  for candidate in "$build/bin/eziotrace" "$build/tests/ezio_analyze_cli"; do
    if [[ -x $candidate ]]; then EZIOTRACE=$candidate; break; fi
  done
fi
for tool in "$gen" "${EZIOTRACE:-}" /usr/bin/time; do
  [[ -n $tool && -x $tool ]] || { echo "run.sh: missing $tool (build the targets first)" >&2; exit 1; }
done
command -v otf2-print >/dev/null || { echo "run.sh: otf2-print not found" >&2; exit 1; }

# shellcheck source=../measure.sh
source "$root/bench/measure.sh"
echo "analyzers: $EZIOTRACE"
commands=(profile layers files latency advise report)
declare -A rss_of
for n in "${sizes[@]}"; do
  dir=$scratch/archive-$n
  rm -rf "$dir"
  gen_time=$(measure "$gen" "$dir" "$n" 4)
  echo
  echo "== $n events ($(du -sh "$dir" | cut -f1), generated in ${gen_time%% *} s) =="
  read -r base_t base_m < <(measure otf2-print --silent "$dir/eziotrace.otf2")
  printf "%-22s %8s %8s %10s %8s %12s\n" tool seconds ratio "peak RSS" ratio "M events/s"
  printf "%-22s %8.2f %8s %8d KB %8s %12.1f\n" "otf2-print --silent" "$base_t" 1.00 "$base_m" 1.00 \
    "$(awk -v n="$n" -v t="$base_t" 'BEGIN { print (t > 0 ? n / t / 1e6 : 0) }')"
  for cmd in "${commands[@]}"; do
    args=("$cmd")
    [[ $cmd != report ]] || args+=(-f -o "$scratch/report.html")
    read -r t m < <(measure "$EZIOTRACE" "${args[@]}" "$dir")
    rss_of[$cmd-$n]=$m
    printf "%-22s %8.2f %8.2f %8d KB %8.2f %12.1f\n" "eziotrace $cmd" "$t" \
      "$(awk -v a="$t" -v b="$base_t" 'BEGIN { print (b > 0 ? a / b : 0) }')" "$m" \
      "$(awk -v a="$m" -v b="$base_m" 'BEGIN { print (b > 0 ? a / b : 0) }')" \
      "$(awk -v n="$n" -v t="$t" 'BEGIN { print (t > 0 ? n / t / 1e6 : 0) }')"
  done
  rm -rf "$dir"
done

if [[ ${#sizes[@]} -ge 2 ]]; then
  first=${sizes[0]} last=${sizes[-1]}
  echo
  echo "== memory growth from $first to $last events (1.00 = flat) =="
  for cmd in "${commands[@]}"; do
    printf "%-22s %8.2f\n" "eziotrace $cmd" \
      "$(awk -v a="${rss_of[$cmd-$last]}" -v b="${rss_of[$cmd-$first]}" 'BEGIN { print a / b }')"
  done
fi
