#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# What the mpiio EZTrace module (docs/mpiio.md) costs per call: CALLS small MPI_File_write_at and
# MPI_File_write_at_all (BYTES bytes each) under MPICH and Open MPI, at 1 and 2 ranks, run plain,
# under EZTrace's MPI module alone, with posixio, with mpiio. The mpiio wrapper per call is
# (MPI module + mpiio) - (MPI module alone), held against EZTrace's own posixio wrapper per
# read()/write() measured in the same run (bench/posixio_call.sh), and against what posixio adds
# to the same MPI call (its wrapper on the pwrite inside). CPU time of the ranks' calling thread
# per call (the slowest rank's; with 2 ranks a collective call's includes the wait for the other
# rank, spinning), settings interleaved, each figure the best of REPS rounds.
#   bench/mpiio/run.sh [BUILD_DIR]     (prints figures, asserts nothing; no root needed)
#   MPIS="mpich openmpi" KINDS="at at_all" RANKS="1 2" REPS=5 CALLS=20000 BYTES=8
#   BEFORE=DIR: also another build of the module (DIR/<mpi>/libeztrace-mpiio.so), interleaved
set -euo pipefail
here=$(dirname "$0")
build=$(realpath "${1:-$here/../../build}")
. "$here/../posixio_call.sh"
command -v eztrace >/dev/null || { echo "EZTrace is not installed" >&2; exit 1; }
mpis=${MPIS:-mpich openmpi}
kinds=${KINDS:-at at_all}
ranks=${RANKS:-1 2}
reps=${REPS:-5}
calls=${CALLS:-20000}
bytes=${BYTES:-8}
for mpi in $mpis; do
  for f in "$build/tests/programs-bin/mpiio_small_writes_$mpi" \
    "$build/bin/eztrace/$mpi/libeztrace-mpiio.so"; do
    [[ -e $f ]] || { echo "no $f: build mpiio_small_writes_$mpi and eztrace_mpiio_$mpi" >&2; exit 1; }
  done
done
work=$(mktemp -d /tmp/ezio-bench-mpiio.XXXXXX)
trap 'rm -rf "$work"' EXIT

launcher() {
  case $1 in
    mpich) echo "mpiexec.mpich -np $2" ;;
    openmpi) echo "mpirun.openmpi --allow-run-as-root --oversubscribe -np $2" ;;
  esac
}

# CPU ns per call as the program measures its loop: MPI KIND NP SETTING.
call_ns() {
  local mpi=$1 kind=$2 np=$3 setting=$4 tool=()
  case $setting in
    mpi) tool=(eztrace -t "$mpi") ;;
    posixio) tool=(eztrace -t "$mpi posixio") ;;
    mpiio) tool=(eztrace -l "$build/bin/eztrace/$mpi" -t "$mpi mpiio") ;;
    before) tool=(eztrace -l "$BEFORE/$mpi" -t "$mpi mpiio") ;;
  esac
  rm -rf "$work/t" "$work/small.dat" && mkdir "$work/t"
  # shellcheck disable=SC2046
  EZTRACE_TRACE_DIR=$work/t $(launcher "$mpi" "$np") "${tool[@]}" \
    "$build/tests/programs-bin/mpiio_small_writes_$mpi" "$work" "$calls" "$bytes" "$kind" \
    2>/dev/null | sed -n 's/.*cpu_ns_per_call=\([0-9.]*\).*/\1/p'
}

settings=(plain mpi posixio mpiio)
[[ -z ${BEFORE:-} ]] || settings+=(before)
declare -A runs
for ((r = 0; r < reps; r++)); do
  for mpi in $mpis; do
    for kind in $kinds; do
      for np in $ranks; do
        for s in "${settings[@]}"; do
          runs[$mpi.$kind.$np.$s]+="$(call_ns "$mpi" "$kind" "$np" "$s") "
        done
      done
    done
  done
  posixio_sample "$work" 200000
done
best() { tr ' ' '\n' <<<"${runs[$1]}" | grep . | sort -g | head -n 1; }
posix_call=$(posixio_call_ns)

printf '%d MPI_File_write_at[_all] of %d bytes per rank, best of %d rounds, CPU ns per call (load %s)\n' \
  "$calls" "$bytes" "$reps" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf "EZTrace's posixio wrapper (dd bs=1, 2N - N calls): %.1f ns per read() or write()\n" "$posix_call"
printf '%-8s %-7s %2s %9s %9s %9s %9s %9s %8s %9s %8s\n' mpi call np plain +mpi +posixio +mpiio \
  wrapper /posixio posix_in /in
for mpi in $mpis; do
  for kind in $kinds; do
    for np in $ranks; do
      k=$mpi.$kind.$np
      plain=$(best "$k.plain") m=$(best "$k.mpi") p=$(best "$k.posixio") io=$(best "$k.mpiio")
      [[ -n $plain && -n $m && -n $p && -n $io ]] || { echo "$k: a run failed" >&2; exit 1; }
      wrapper=$(echo "$io - $m" | bc -l) inside=$(echo "$p - $m" | bc -l)
      printf '%-8s %-7s %2d %9.1f %9.1f %9.1f %9.1f %9.1f %7.2fx %9.1f %7.2fx' "$mpi" "$kind" "$np" \
        "$plain" "$m" "$p" "$io" "$wrapper" "$(echo "$wrapper / $posix_call" | bc -l)" "$inside" \
        "$(echo "$wrapper / $inside" | bc -l)"
      if [[ -n ${BEFORE:-} ]]; then
        b=$(echo "$(best "$k.before") - $m" | bc -l)
        printf '   before: %.1f (%.2fx, %.2fx)' "$b" "$(echo "$b / $posix_call" | bc -l)" \
          "$(echo "$b / $inside" | bc -l)"
      fi
      echo
    done
  done
done
# The medians of the rounds, each round's wrapper its own +mpiio - +mpi and its ratio to that
# round's posixio figure: paired in a round, the settings saw the same load.
posixio_each=$(printf '%s\n' "${posixio_rounds[@]}" | awk '{ printf "%.1f ", (($4 - $3) - ($2 - $1)) / (2 * $5) }')
per_round() { # KEY SETTING: the wrapper and its ratio to posixio, one round a line
  paste <(tr ' ' '\n' <<<"${runs[$1.$2]}" | grep .) <(tr ' ' '\n' <<<"${runs[$1.mpi]}" | grep .) \
    <(tr ' ' '\n' <<<"$posixio_each" | grep .) | awk '{ printf "%.1f %.3f\n", $1 - $2, ($1 - $2) / $3 }'
}
med() { sort -g | awk '{ v[NR] = $1 } END { printf "%.2f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
printf "Medians of the %d rounds, paired per round (posixio's wrapper: median %.1f ns per call):\n" \
  "$reps" "$(tr ' ' '\n' <<<"$posixio_each" | grep . | med)"
for mpi in $mpis; do
  for kind in $kinds; do
    for np in $ranks; do
      k=$mpi.$kind.$np
      printf '  %-8s %-7s %2d wrapper %7.1f  %5.2fx posixio' "$mpi" "$kind" "$np" \
        "$(per_round "$k" mpiio | cut -d' ' -f1 | med)" "$(per_round "$k" mpiio | cut -d' ' -f2 | med)"
      if [[ -n ${BEFORE:-} ]]; then
        printf '   before %7.1f  %5.2fx posixio' "$(per_round "$k" before | cut -d' ' -f1 | med)" \
          "$(per_round "$k" before | cut -d' ' -f2 | med)"
      fi
      echo
    done
  done
done
echo '+mpi: EZTrace with the MPI module alone; +posixio, +mpiio: that module added to it;'
echo "wrapper: +mpiio - +mpi; /posixio: over posixio's wrapper per read()/write() (dd); posix_in:"
echo 'posixio on the POSIX calls inside one MPI call (+posixio - +mpi: a pwrite for a small'
echo 'independent write); /in: the wrapper over it.'
