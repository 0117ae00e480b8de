# SPDX-License-Identifier: GPL-2.0-only
# Sourced by bench/hdf5 and bench/mpiio: EZTrace's own posixio wrapper per call, the baseline our
# wrappers are held to. `dd bs=1` from /dev/zero to /dev/null, N and 2N calls, plain and under
# `eztrace -t posixio`: the difference of 2N and N cancels EZTrace's start and end. CPU time
# (user + system) of dd. posixio_sample WORK N takes one round of the four runs (interleave it
# with the bench's own settings); posixio_call_ns then prints ns per read() or write(), from the
# best of the rounds (a shared machine's noise only adds time). Each row of posixio_rounds is one
# round's "dd N, dd 2N, posixio N, posixio 2N, N" (the benches pair a round's figures).
posixio_rounds=()

posixio_dd_ns() {
  local work=$1 n=$2
  shift 2
  rm -rf "$work/pt" && mkdir "$work/pt"
  local TIMEFORMAT='%3U %3S'
  { time EZTRACE_TRACE_DIR=$work/pt "$@" dd if=/dev/zero of=/dev/null bs=1 count="$n" status=none \
      >/dev/null 2>&1; } 2>"$work/pcpu"
  awk '{printf "%d\n", ($1 + $2) * 1e9}' "$work/pcpu"
}

posixio_sample() {
  local work=$1 n=$2 row
  row="$(posixio_dd_ns "$work" "$n" env) $(posixio_dd_ns "$work" $((2 * n)) env)"
  row+=" $(posixio_dd_ns "$work" "$n" eztrace -t posixio)"
  row+=" $(posixio_dd_ns "$work" $((2 * n)) eztrace -t posixio) $n"
  posixio_rounds+=("$row")
}

posixio_call_ns() {
  printf '%s\n' "${posixio_rounds[@]}" | awk '
    NR == 1 || $1 < d1 { d1 = $1 } NR == 1 || $2 < d2 { d2 = $2 }
    NR == 1 || $3 < p1 { p1 = $3 } NR == 1 || $4 < p2 { p2 = $4 } { n = $5 }
    # Each dd "call" is a read and a write: both wrapped by posixio.
    END { printf "%.1f\n", ((p2 - p1) - (d2 - d1)) / (2 * n) }'
}
