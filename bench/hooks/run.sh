#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# What the syscall hooks cost per call, measured on 1-byte write()s to /dev/null (the cheapest call
# eziotrace hooks), in five settings: no BPF at all; empty programs on the same tracepoints (the
# kernel's share, paid by any tool that hooks syscalls this way); a process that is not traced
# while eziotrace records another one (what a recording costs the rest of the machine); the traced
# process, syscall layer only; the traced process, all layers. Each figure is the fastest batch
# (ezio_bench_hook_cost), best of REPS runs: on a shared VM that is the figure noise leaves alone.
# Then, per layer set (syscall, +vfs, +fs, +pagecache, all), the same 1-byte write, a 4 KiB
# buffered write appending to a file (a page added to the cache and dirtied per call: where the
# page-cache and FS layers' per-page hooks fire) and a 4 KiB read of a cached page, each against
# the floor of the same run; with BEFORE=<another build's eziotrace> (main's, say) its figures in
# the same interleaved rounds. Then context switches.
#   bench/hooks/run.sh [BUILD_DIR]     (root; prints figures, asserts nothing)
#   PARTS="null layers switches" (default all three), WORKLOADS="null write read" (the layer sets'),
#   FILE_DIR: where the files are written (default a temporary directory under /tmp; a disk file
#   system, not tmpfs, whose pages have no writeback)
set -euo pipefail
build=$(realpath "${1:-$(dirname "$0")/../../build}")
ezt=$build/bin/eziotrace
cost=$build/bench/hooks/ezio_bench_hook_cost
for f in "$ezt" "$cost"; do
  [[ -x $f ]] || { echo "no $f: build the eziotrace and ezio_bench_hook_cost targets first" >&2; exit 1; }
done
[[ $(id -u) == 0 ]] || { echo "loading BPF programs needs root" >&2; exit 1; }
reps=${REPS:-3}
parts=${PARTS:-null layers switches}
before=${BEFORE:-}
[[ -z $before || -x $before ]] || { echo "BEFORE=$before is no executable" >&2; exit 1; }
work=$(mktemp -d /tmp/ezio-hooks.XXXXXX)
trap 'rm -rf "$work"' EXIT
# Each build's probe plan in a cache of its own: one shared cache holds one build's plan, and the
# other build would probe the kernel again at every run.
export EZIOTRACE_CACHE_DIR=$work/cache
mkdir -m700 -p "$work/cache" "$work/cache.before"

best() { sort -g | head -n 1; }

# Runs "$@" (which prints ns per call) $reps times; prints the best.
best_of() {
  for ((i = 0; i < reps; i++)); do "$@"; done | best
}

# ns per call of a process eziotrace does not trace, while it records a sleeping one; "$@": eziotrace
# record options; $cost_args: what ezio_bench_hook_cost times.
# untraced runs in best_of's pipeline, out of reach of the script's EXIT trap, and an EXIT trap set
# there did not run either (bash 5.2, pipeline in a command substitution): its body is its own
# subshell, whose trap stops the recorder on every path. The start is waited for by the clock, not by
# a count of polls (a count of 0.1 s sleeps was ~60 s of wall time at best, less than a first load
# with probing takes on a loaded 2-core VM: the script gave up, then the line came, and the recorder
# it had started went on recording `sleep 600` with nobody to stop it).
start_timeout=${START_TIMEOUT:-300}

# Stops recorder $1, which may still be loading: TERM, not INT, which a background job of a
# non-interactive shell starts with ignored; sent again until the recorder has gone, in case one
# comes before its handlers are in place.
stop_recorder() {
  for ((t = 0; t < 300; t++)); do
    kill -TERM "$1" 2>/dev/null || break
    sleep 0.2
  done
  wait "$1" 2>/dev/null || true
}
cost_args=()
untraced() (
  "$ezt" record -v "$@" -o "$work/other" --force -- sleep 600 >"$work/other.log" 2>&1 &
  local rec=$!
  trap "stop_recorder $rec" EXIT
  local deadline=$((SECONDS + start_timeout))
  until grep -q 'loaded and attached' "$work/other.log"; do
    if ! kill -0 "$rec" 2>/dev/null; then
      cat "$work/other.log" >&2
      echo "the recorder exited before it started" >&2
      exit 1
    fi
    if ((SECONDS >= deadline)); then
      cat "$work/other.log" >&2
      echo "the recorder did not start within ${start_timeout} s (START_TIMEOUT)" >&2
      exit 1
    fi
    sleep 0.1
  done
  "$cost" "${cost_args[@]}"
  trap - EXIT
  kill -INT "$rec"
  wait "$rec" || true
)

# ns per call of the traced process; "$@": eziotrace record options.
traced() {
  "$ezt" record "$@" -o "$work/traced" --force -- "$cost" "${cost_args[@]}" 2>"$work/traced.log"
  awk '/^ *(syscall|vfs|fs|pagecache|block|process) +[0-9]/ {l += $NF} END {print l + 0}' \
    "$work/traced.log" >>"$work/lost"
}

has_part() { [[ " $parts " == *" $1 "* ]]; }

if has_part null; then
plain=$(best_of "$cost")
floor=$(best_of "$cost" --floor)
other=$(best_of untraced)
sys=$(best_of traced --layers syscall)
all=$(best_of traced)

row() { printf '  %-40s %7.1f ns  %+7.1f ns  %s\n' "$1" "$2" "$(echo "$2 - $plain" | bc -l)" "$3"; }
echo "write(fd, buf, 1) to /dev/null, fastest batch of 5000 calls, best of $reps runs"
printf '  %-40s %10s  %10s\n' "" "per call" "added"
row "no BPF" "$plain" ""
row "empty programs on sys_enter/sys_exit" "$floor" "the kernel's share"
row "another process, while eziotrace records" "$other" "every process on the machine pays this"
row "traced, --layers syscall" "$sys" ""
row "traced, all layers" "$all" "/dev/null: no FS, page cache or block work"
echo "  events lost in the traced runs: $(awk '{l += $1} END {print l + 0}' "$work/lost")"
fi

if has_part layers; then
  # shellcheck source=bench/hooks/layers.sh
  source "$(dirname "$0")/layers.sh"
fi

has_part switches || exit 0
# Context switches. The layers but the page cache, for the "off" figures.
no_pc=syscall,vfs,fs,block
cost_args=(--switches)
: >"$work/lost"
sw_plain=$(best_of "$cost" --switches)
sw_other_off=$(best_of untraced --layers "$no_pc")
sw_other_on=$(best_of untraced)
sw_traced_off=$(best_of traced --layers "$no_pc")
sw_traced_on=$(best_of traced)

# $1 label, $2 page-cache layer off, $3 on: ns per switch, what the layer adds, and the ratio.
sw_row() {
  printf '  %-34s %8.1f ns %8.1f ns  %+6.1f ns  x%.3f\n' "$1" "$2" "$3" \
    "$(echo "$3 - $2" | bc -l)" "$(echo "$3 / $2" | bc -l)"
}
echo
echo "context switch (pipe ping-pong on one CPU), fastest batch of 2000 switches, best of $reps runs"
printf '  %-34s %11s %11s  %9s  %s\n' "" "pagecache off" "on" "added" "ratio"
printf '  %-34s %8.1f ns\n' "no BPF" "$sw_plain"
sw_row "another process, while recording" "$sw_other_off" "$sw_other_on"
sw_row "traced (two syscalls per switch)" "$sw_traced_off" "$sw_traced_on"
echo "  events lost in the traced runs: $(awk '{l += $1} END {print l + 0}' "$work/lost")"
