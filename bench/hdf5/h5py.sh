#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The merged ratio on h5py collective writes (issue 28, "Benchmarks"): h5py + mpi4py (Debian's
# python3-h5py-mpi, on Open MPI's parallel HDF5) under `mpirun.openmpi -np RANKS`, writing many
# small datasets and a few large ones (bench/hdf5/h5py_collective.py), run plain, under EZTrace
# alone (its openmpi module with our hdf5 and mpiio and its posixio) and under eziotrace's merged
# recording with the same modules (EZTrace and the kernel layers, merged into one archive).
# Settings interleaved, ROUNDS rounds; per setting the medians of: the whole command's wall time,
# its CPU time (user + system of the command and everything it waited for: the ranks, eziotrace
# and its merge; not the kernel's BPF programs, counted in the CPU of the process they ran in),
# and the writes' own wall time (rank 0, open to close); each with its ratio to plain.
#   bench/hdf5/h5py.sh [BUILD_DIR]    (root: eziotrace loads BPF programs; asserts nothing)
#   ROUNDS=5 RANKS=2 KINDS="small large"
set -euo pipefail
here=$(realpath "$(dirname "$0")")
build=$(realpath "${1:-$here/../../build}")
rounds=${ROUNDS:-5}
ranks=${RANKS:-2}
kinds=${KINDS:-small large}
for f in "$build/bin/eziotrace" "$build/bin/eztrace/libeztrace-hdf5.so" \
  "$build/bin/eztrace/openmpi/libeztrace-mpiio.so"; do
  [[ -e $f ]] || { echo "no $f: build eziotrace and eziotrace_preload" >&2; exit 1; }
done
/usr/bin/python3 -c 'import h5py, mpi4py' 2>/dev/null ||
  { echo "python3-h5py-mpi and python3-mpi4py are needed" >&2; exit 1; }
command -v eztrace >/dev/null || { echo "EZTrace is not installed" >&2; exit 1; }
work=$(mktemp -d /tmp/ezio-bench-h5py.XXXXXX)
trap 'rm -rf "$work"' EXIT
modules="openmpi hdf5 mpiio posixio"
mpirun=(mpirun.openmpi --allow-run-as-root --oversubscribe -np "$ranks")

# "wall cpu write" of one run: KIND SETTING.
run() {
  local kind=$1 setting=$2 cmd
  local app=(/usr/bin/python3 "$here/h5py_collective.py" "$work/f.h5" "$kind")
  rm -rf "$work/out" "$work/t" "$work/f.h5" && mkdir "$work/t"
  case $setting in
    plain) cmd=("${mpirun[@]}" "${app[@]}") ;;
    eztrace)
      cmd=(env EZTRACE_TRACE_DIR="$work/t" "${mpirun[@]}" eztrace
        -l "$build/bin/eztrace:$build/bin/eztrace/openmpi" -t "$modules" "${app[@]}") ;;
    merged) cmd=("$build/bin/eziotrace" -t "${modules// /,}" -o "$work/out" -- "${mpirun[@]}" "${app[@]}") ;;
  esac
  /usr/bin/time -f '%e %U %S' -o "$work/time" "${cmd[@]}" >"$work/log" 2>&1 ||
    { echo "failed: ${cmd[*]}" >&2; tail -5 "$work/log" >&2; exit 1; }
  local write
  write=$(sed -n 's/.*write_s=\([0-9.]*\).*/\1/p' "$work/log" | head -n 1)
  awk -v w="$write" '{printf "%s %.3f %s\n", $1, $2 + $3, w}' "$work/time"
}

settings=(plain eztrace merged)
declare -A rows
for ((r = 0; r < rounds; r++)); do
  for kind in $kinds; do
    for s in "${settings[@]}"; do
      rows[$kind.$s]+="$(run "$kind" "$s")"$'\n'
    done
  done
done

# The median of column COL of KEY's rows.
median() {
  grep . <<<"${rows[$1]}" | awk -v c="$2" '{print $c}' | sort -g |
    awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}
printf 'h5py collective writes, %d ranks (Open MPI), medians of %d interleaved rounds (load %s)\n' \
  "$ranks" "$rounds" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-6s %-8s %9s %7s %9s %7s %9s %7s\n' kind setting wall_s ratio cpu_s ratio write_s ratio
for kind in $kinds; do
  for s in "${settings[@]}"; do
    line=$(printf '%-6s %-8s' "$kind" "$s")
    for col in 1 2 3; do
      v=$(median "$kind.$s" "$col") base=$(median "$kind.plain" "$col")
      line+=$(printf ' %9.3f %6.2fx' "$v" "$(echo "$v / $base" | bc -l)")
    done
    echo "$line"
  done
done
echo 'small: 100 datasets x 1 KiB per rank; large: 4 datasets x 16 MiB per rank; one collective'
echo "H5Dwrite per dataset and rank. eztrace: -t \"$modules\"; merged: eziotrace -t ${modules// /,}."
