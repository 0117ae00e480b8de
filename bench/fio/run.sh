#!/bin/bash
# The FIO scenarios of the EZIOTracer talk: sequential writes, sync engine, 4 KiB blocks, threads;
# buffered 100 MiB and direct+fsync 10 MiB per job, 1/2/4/8 jobs. Each scenario runs plain, under
# EZTrace (posixio module) and under `eziotrace record` (all layers), in the same session, so the
# ratios compare like with like. Not a test: run by hand, as root, on an idle machine.
#
#   bench/fio/run.sh [-b build-dir] [-d data-dir] [-r repetitions]
set -euo pipefail

build=build
data=
reps=3
while getopts "b:d:r:" opt; do
  case $opt in
    b) build=$OPTARG ;;
    d) data=$OPTARG ;;
    r) reps=$OPTARG ;;
    *) echo "usage: $0 [-b build-dir] [-d data-dir] [-r repetitions]" >&2; exit 2 ;;
  esac
done
root=$(cd "$(dirname "$0")/../.." && pwd)
eziotrace=$root/$build/recorder/eziotrace
[[ -x $eziotrace ]] || { echo "no $eziotrace: build the eziotrace target first" >&2; exit 1; }
for tool in fio eztrace; do
  command -v $tool >/dev/null || { echo "$tool is missing" >&2; exit 1; }
done
[[ $(id -u) == 0 ]] || { echo "eziotrace record needs root" >&2; exit 1; }
work=$(mktemp -d /tmp/ezio-fio.XXXXXX)
trap 'rm -rf "$work"' EXIT
data=${data:-$work/data}
mkdir -p "$data"

now() { date +%s.%N; }

# fio_args <scenario> <jobs>
fio_args() {
  local common="--name=w --rw=write --ioengine=sync --bs=4k --thread --numjobs=$2 --directory=$data --group_reporting --output=/dev/null"
  case $1 in
    buffered) echo "$common --size=100M" ;;
    direct) echo "$common --size=10M --direct=1 --fsync=1" ;;
  esac
}

# Median of the wall times of $reps runs of a command (files removed between runs).
median_time() {
  local times=()
  for ((i = 0; i < reps; i++)); do
    rm -f "$data"/w.*
    sync
    local t0; t0=$(now)
    "$@" >"$work/last.out" 2>&1 || { cat "$work/last.out" >&2; return 1; }
    local t1; t1=$(now)
    times+=("$(echo "$t1 - $t0" | bc -l)")
  done
  printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}

printf '%-9s %4s %9s %9s %9s %8s %8s %12s %6s\n' scenario jobs plain_s eztrace_s ezio_s eztr_x ezio_x kevents/s lost
for scenario in buffered direct; do
  for jobs in 1 2 4 8; do
    args=$(fio_args $scenario $jobs)
    plain=$(median_time fio $args)
    (cd "$work" && rm -rf fio_trace) 
    ezt=$(cd "$work" && median_time eztrace -t posixio fio $args)
    ezio=$(median_time "$eziotrace" record -f -o "$work/ezio" -- fio $args)
    # The summary of the last eziotrace run: events and lost events summed over the layers.
    read -r events lost < <(awk '/^ *(syscall|vfs|fs|pagecache|block|process) +[0-9]/ {e += $2; l += $NF} END {print e+0, l+0}' "$work/last.out")
    printf '%-9s %4d %9.3f %9.3f %9.3f %8.2f %8.2f %12.0f %6d\n' $scenario $jobs "$plain" "$ezt" "$ezio" \
      "$(echo "$ezt / $plain" | bc -l)" "$(echo "$ezio / $plain" | bc -l)" \
      "$(echo "$events / $ezio" | bc -l)" "$lost"
  done
done
