#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# What the flight recorder costs the processes it does not record (docs/flight-recorder.md, Cost).
# Three settings, interleaved: no BPF; an ordinary recording open (the recorder's hooks attached,
# no flight job); eziotraced flight-recording an empty cgroup of its own
# (the same hooks attached, one flight job). In each: ns per 1-byte write() to /dev/null of a
# process outside the cgroup (ezio_bench_hook_cost, fastest batch), and the programs that select a
# job's processes, per run (kernel.bpf_stats_enabled, set for the run and restored): ezio_fork,
# ezio_exec, while a shell starts /bin/true N times.
#   bench/flight/run.sh [BUILD_DIR]      (root; prints figures, asserts nothing)
set -euo pipefail
build=$(realpath "${1:-$(dirname "$0")/../../build}")
ezt=$build/bin/eziotrace
daemon=$build/bin/eziotraced
cost=$build/bench/hooks/ezio_bench_hook_cost
for f in "$ezt" "$daemon" "$cost"; do
  [[ -x $f ]] || { echo "no $f: build eziotrace, eziotraced and ezio_bench_hook_cost first" >&2; exit 1; }
done
[[ $(id -u) == 0 ]] || { echo "loading BPF programs needs root" >&2; exit 1; }
command -v bpftool >/dev/null || { echo "bpftool is needed" >&2; exit 1; }
rounds=${ROUNDS:-3}
forks=${FORKS:-2000}
work=$(mktemp -d /tmp/ezio-flight-bench.XXXXXX)
chmod 0711 "$work"  # eziotraced's socket there: its group must reach it
for root in /sys/fs/cgroup/unified /sys/fs/cgroup; do [[ -e $root/cgroup.threads ]] && break; done
[[ -e $root/cgroup.threads ]] || { echo "no cgroup v2 mount" >&2; exit 1; }
cg=$root/ezio-flight-bench-$$
stats_before=$(sysctl -n kernel.bpf_stats_enabled)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  rmdir "$cg" 2>/dev/null || true
  sysctl -q kernel.bpf_stats_enabled="$stats_before"
  rm -rf "$work"
}
trap cleanup EXIT
mkdir "$cg"

# Starts eziotraced with "$@" on a private socket; waits until it serves.
start_daemon() {
  # Root records: the group of root is enough, no group eziotrace needed. The last daemon's log
  # goes first: its "ready" would otherwise be read before this one truncates the file.
  rm -f "$work/daemon.log"
  "$daemon" --foreground --socket "$work/sock" --group root "$@" >"$work/daemon.log" 2>&1 &
  pids+=($!)
  until grep -qs "ready" "$work/daemon.log"; do
    kill -0 "${pids[-1]}" 2>/dev/null || { cat "$work/daemon.log" >&2; exit 1; }
    sleep 0.1
  done
}
stop_all() {
  for p in "${pids[@]}"; do kill -INT "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  pids=()
  rm -f "$work/sock"
}

# ns per run of the program named $1 that process $2 holds (its fds' prog_id, /proc/PID/fdinfo),
# over the fork loop (run_time_ns / run_cnt).
per_run() {
  local id
  for id in $(grep -h '^prog_id:' /proc/"$2"/fdinfo/* 2>/dev/null | awk '{print $2}' | sort -u); do
    bpftool -j prog show id "$id" 2>/dev/null | python3 -c "
import json, sys
p = json.load(sys.stdin)
if p.get('name') == '$1':
    print('%.0f' % (p.get('run_time_ns', 0) / max(p.get('run_cnt', 0), 1)))"
  done | head -n 1
}

fork_loop() { for ((i = 0; i < forks; i++)); do /bin/true; done; }

measure() {  # $1: label
  local writes fork exec
  writes=$(for ((i = 0; i < 3; i++)); do "$cost"; done | sort -g | head -n 1)
  if ((${#pids[@]} > 0)); then
    sysctl -q kernel.bpf_stats_enabled=1
    fork_loop
    fork=$(per_run ezio_fork "${pids[0]}")
    exec=$(per_run ezio_exec "${pids[0]}")
    sysctl -q kernel.bpf_stats_enabled="$stats_before"
  else
    fork=- exec=-
  fi
  printf '  %-44s %8.1f ns/write  ezio_fork %4s ns  ezio_exec %4s ns\n' "$1" "$writes" "$fork" "$exec"
}

echo "a process outside the flight-recorded cgroup; $rounds rounds, interleaved"
for ((r = 0; r < rounds; r++)); do
  measure "no BPF"
  # The same programs attached by an ordinary recording (in-process: its pid holds them).
  "$ezt" record --no-service -v -o "$work/rec" --force -- sleep 600 >"$work/rec.log" 2>&1 &
  pids+=($!)
  until grep -q "loaded and attached" "$work/rec.log"; do sleep 0.1; done
  measure "a recording open (no flight job)"
  stop_all
  start_daemon --flight "/$(basename "$cg")"
  measure "eziotraced --flight (one job, empty)"
  stop_all
done
