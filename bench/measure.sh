# SPDX-License-Identifier: GPL-2.0-only
# Sourced by the bench scripts: a scratch directory ($EZIO_BENCH_DIR, else a fresh one removed at
# exit) and measure CMD... -> "seconds kilobytes" (wall time and peak RSS from /usr/bin/time -v).
scratch=${EZIO_BENCH_DIR:-$(mktemp -d)}
mkdir -p "$scratch"
cleanup() { [[ -n ${EZIO_BENCH_DIR:-} ]] || rm -rf "$scratch"; }
trap cleanup EXIT

measure() {
  local log=$scratch/time.log
  /usr/bin/time -v "$@" >/dev/null 2>"$log" || { echo "run.sh: failed: $*" >&2; tail -5 "$log" >&2; exit 1; }
  local wall rss
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$log")
  rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$log")
  # h:mm:ss or m:ss.cc -> seconds
  awk -v t="$wall" -v r="$rss" 'BEGIN { n = split(t, p, ":"); s = 0;
    for (i = 1; i <= n; i++) s = s * 60 + p[i]; printf "%.2f %d\n", s, r }'
}

