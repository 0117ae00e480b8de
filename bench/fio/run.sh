#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
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
eziotrace=$root/$build/bin/eziotrace
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

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# Runs a command $reps times (files removed between runs); sets `wall` to the median wall time,
# `cpu` to the median CPU time of the whole command (user + system: fio, and the recorder when it
# records), and `app` and `app_cpu` to the median time and CPU time eziotrace reports for the
# application itself ("recorded ... for X s (..., Y s of CPU)": from its release to its exit,
# without the recorder's start-up and archive closing), if any. CPU times are steadier than wall
# times on a shared host.
TIMEFORMAT='%3U %3S'
measure() {
  local walls=() apps=() cpus=() app_cpus=()
  for ((i = 0; i < reps; i++)); do
    rm -f "$data"/w.*
    sync
    local t0; t0=$(now)
    { time "$@" >"$work/last.out" 2>&1; } 2>"$work/cpu" || { cat "$work/last.out" >&2; return 1; }
    local t1; t1=$(now)
    walls+=("$(echo "$t1 - $t0" | bc -l)")
    cpus+=("$(awk '{print $1 + $2}' "$work/cpu")")
    apps+=("$(grep -oE 'recorded .* for [0-9.]+ s' "$work/last.out" | grep -oE '[0-9.]+ s$' | tr -d ' s' || true)")
    app_cpus+=("$(grep -oE '[0-9.]+ s of CPU' "$work/last.out" | awk '{print $1}' || true)")
  done
  wall=$(printf '%s\n' "${walls[@]}" | median)
  cpu=$(printf '%s\n' "${cpus[@]}" | median)
  app=$(printf '%s\n' "${apps[@]}" | { grep . || true; } | median)
  app_cpu=$(printf '%s\n' "${app_cpus[@]}" | { grep . || true; } | median)
}

# ezio_x: wall time under `eziotrace record` over plain; app_x: the application's own time under
# recording over plain (the start-up of about 0.1 s, BPF load and attach, is outside it);
# appcpu_x: fio's CPU time under recording over plain (the BPF programs run in its threads);
# cpu_x: the CPU time of fio and the recorder together over plain fio's.
printf '%-9s %4s %8s %9s %8s %8s %8s %8s %9s %8s %12s %6s\n' scenario jobs plain_s eztrace_s ezio_s \
  eztr_x ezio_x app_x appcpu_x cpu_x kevents/s lost
for scenario in buffered direct; do
  for jobs in 1 2 4 8; do
    args=$(fio_args $scenario $jobs)
    measure fio $args
    plain=$wall plain_cpu=$cpu
    (cd "$work" && rm -rf fio_trace)
    # EZTrace writes its trace (fio_trace/) into the current directory.
    pushd "$work" >/dev/null && measure eztrace -t posixio fio $args && popd >/dev/null
    ezt=$wall
    measure "$eziotrace" record -f -o "$work/ezio" -- fio $args
    ezio=$wall
    # The summary of the last eziotrace run: events and lost events summed over the layers.
    read -r events lost < <(awk '/^ *(syscall|vfs|fs|pagecache|block|process) +[0-9]/ {e += $2; l += $NF} END {print e+0, l+0}' "$work/last.out")
    printf '%-9s %4d %8.3f %9.3f %8.3f %8.2f %8.2f %8.2f %9.2f %8.2f %12.0f %6d\n' $scenario $jobs \
      "$plain" "$ezt" "$ezio" "$(echo "$ezt / $plain" | bc -l)" "$(echo "$ezio / $plain" | bc -l)" \
      "$(echo "$app / $plain" | bc -l)" "$(echo "$app_cpu / $plain_cpu" | bc -l)" \
      "$(echo "$cpu / $plain_cpu" | bc -l)" "$(echo "$events / $app" | bc -l)" "$lost"
  done
done
