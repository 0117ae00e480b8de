#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# What the hdf5 EZTrace module (docs/hdf5.md) costs per call, on many small H5Dwrite calls (one int
# each into a contiguous dataset: HDF5's sieve buffer keeps them off the file, so the call itself
# is what is timed): the program alone, under EZTrace's posixio alone, under hdf5 alone, under
# hdf5 + posixio; then EZTrace's own posixio wrapper per call (bench/posixio_call.sh), to compare
# the two wrappers. CPU time, the settings interleaved, each figure the best of REPS rounds (a
# shared VM's noise only adds time).
#   bench/hdf5/run.sh [BUILD_DIR]     (prints figures, asserts nothing; no root needed)
#   BEFORE=DIR: also another build of the module (DIR/libeztrace-hdf5.so), interleaved
set -euo pipefail
here=$(dirname "$0")
build=$(realpath "${1:-$here/../../build}")
. "$here/../posixio_call.sh"
prog=$build/tests/programs-bin/hdf5_small_writes
modules=$build/bin/eztrace
for f in "$prog" "$modules/libeztrace-hdf5.so"; do
  [[ -e $f ]] || { echo "no $f: build the hdf5_small_writes and eztrace_hdf5 targets" >&2; exit 1; }
done
command -v eztrace >/dev/null || { echo "EZTrace is not installed" >&2; exit 1; }
reps=${REPS:-5}
calls=${CALLS:-200000}
work=$(mktemp -d /tmp/ezio-bench-hdf5.XXXXXX)
trap 'rm -rf "$work"' EXIT

best() { sort -g | head -n 1; }

# CPU ns per H5Dwrite (the program's thread: steadier than wall time on a shared host), as the
# program measures its loop; "$@": the launcher and its options, if any.
h5_ns() {
  rm -rf "$work/t" && mkdir "$work/t"
  EZTRACE_TRACE_DIR=$work/t "$@" "$prog" "$work" "$calls" 2>/dev/null |
    sed -n 's/.*cpu_ns_per_call=\([0-9.]*\).*/\1/p'
}

# The settings interleaved, REPS rounds: drift on a shared host touches them all alike.
declare -A runs
for ((r = 0; r < reps; r++)); do
  runs[plain]+="$(h5_ns env) "
  runs[posix]+="$(h5_ns eztrace -t posixio) "
  runs[hdf5]+="$(h5_ns eztrace -l "$modules" -t hdf5) "
  runs[both]+="$(h5_ns eztrace -l "$modules" -t "hdf5 posixio") "
  [[ -z ${BEFORE:-} ]] || runs[before]+="$(h5_ns eztrace -l "$BEFORE" -t hdf5) "
  posixio_sample "$work" $((calls * 2))
done
pick() { tr ' ' '\n' <<<"${runs[$1]}" | grep . | best; }
plain=$(pick plain) posix=$(pick posix) hdf5=$(pick hdf5) both=$(pick both)
posix_call=$(posixio_call_ns)
wrapper=$(echo "$hdf5 - $plain" | bc -l)

printf '%d H5Dwrite of one int (contiguous dataset, selection included), best of %d runs, CPU ns per call (load %s)\n' \
  "$calls" "$reps" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf '  plain                %8.1f\n' "$plain"
printf '  eztrace posixio      %8.1f   %5.2f x plain\n' "$posix" "$(echo "$posix / $plain" | bc -l)"
printf '  eztrace hdf5         %8.1f   %5.2f x plain\n' "$hdf5" "$(echo "$hdf5 / $plain" | bc -l)"
printf '  eztrace hdf5 posixio %8.1f   %5.2f x plain\n' "$both" "$(echo "$both / $plain" | bc -l)"
printf '  the hdf5 wrapper     %8.1f   per H5Dwrite (hdf5 - plain)\n' "$wrapper"
printf "EZTrace's posixio wrapper, dd bs=1 /dev/zero -> /dev/null, (2N - N calls), CPU ns per call\n"
printf '  posixio wrapper      %8.1f   per read() or write()\n' "$posix_call"
printf '  hdf5 / posixio       %8.2f x\n' "$(echo "$wrapper / $posix_call" | bc -l)"
if [[ -n ${BEFORE:-} ]]; then
  before=$(echo "$(pick before) - $plain" | bc -l)
  printf '  wrapper of %s: %.1f per H5Dwrite, %.2f x posixio\n' "$BEFORE" "$before" \
    "$(echo "$before / $posix_call" | bc -l)"
fi
# The medians of the rounds, each round's wrapper its own hdf5 - plain and its ratio to its own
# posixio figure: paired in a round, the settings saw the same load (the best of a few rounds on
# a loaded machine can be one lucky run).
posixio_each=$(printf '%s\n' "${posixio_rounds[@]}" | awk '{ printf "%.1f ", (($4 - $3) - ($2 - $1)) / (2 * $5) }')
per_round() { # SETTING: its wrapper per round, then its ratio to posixio per round
  paste <(tr ' ' '\n' <<<"${runs[$1]}" | grep .) <(tr ' ' '\n' <<<"${runs[plain]}" | grep .) \
    <(tr ' ' '\n' <<<"$posixio_each" | grep .) | awk '{ printf "%.1f %.3f\n", $1 - $2, ($1 - $2) / $3 }'
}
med() { sort -g | awk '{ v[NR] = $1 } END { printf "%.2f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
printf 'Per round (wrapper ns / ratio to that round'"'"'s posixio): %s\n' "$(per_round hdf5 | tr '\n' ' ')"
printf 'Medians of the %d rounds: hdf5 wrapper %.1f per H5Dwrite, posixio %.1f per call, ratio %.2f x\n' \
  "$reps" "$(per_round hdf5 | cut -d' ' -f1 | med)" "$(tr ' ' '\n' <<<"$posixio_each" | grep . | med)" \
  "$(per_round hdf5 | cut -d' ' -f2 | med)"
if [[ -n ${BEFORE:-} ]]; then
  printf '  wrapper of %s per round: %s\n' "$BEFORE" "$(per_round before | tr '\n' ' ')"
  printf '  wrapper of %s: median %.1f per H5Dwrite, ratio %.2f x posixio\n' "$BEFORE" \
    "$(per_round before | cut -d' ' -f1 | med)" "$(per_round before | cut -d' ' -f2 | med)"
fi
