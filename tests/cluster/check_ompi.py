#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Checks of cluster.slurm_mpi on the archives of the steps with two ranks per node (job_ompi.sh):
`eziotrace record -o ktasks -- srun -N 2 -n 4 ... dd` (each task a session of its own) and
`eziotrace record -o kompi -- mpirun -np 4 ...` (Open MPI: mpirun and its ranks on node1, node2's
orted started by srun through eziotrace's launch agent). For each: one archive, both hosts, each
once in the system tree with its Slurm job and clock data and its two ranks' processes, each rank's
16 writes; each host's block requests equal its disk's counters' delta; no inverted nesting.
  check_ompi.py EZIOTRACE DIR NAME STAT_PREFIX PROGRAM [--mpirun-on node1]
  (exit 1 when a check fails; --mpirun-on: that host ran mpirun in the allocation, outside any
  step, so its part has a job id but no step id; --staggered: each host's two sessions' windows
  overlap without either holding the other's I/O, so that the largest session's count is short;
  --gap-on HOST: that host's second session started after its first ended, its disk written
  between them, so that its requests between its sessions are more than 0)"""
import json
import os
import re
import sys

from cluster_checks import (Checks, block_count_checks, node_properties, run_command, read_shared,
                            step_archive, union_length, vda_windows)

eziotrace, shared, name, stat_prefix, program = sys.argv[1:6]
mpirun_on = sys.argv[7] if sys.argv[6:7] == ["--mpirun-on"] else ""
staggered = "--staggered" in sys.argv[6:]
gapped = sys.argv[sys.argv.index("--gap-on") + 1:][:1] if "--gap-on" in sys.argv else []
hosts = ["node1", "node2"]
check = Checks(name)


def read(f):
    return read_shared(shared, f)


archive = step_archive(check, shared, name)
rc, defs, _ = run_command("otf2-print", "-G", archive)
check("otf2-print reads its definitions", rc == 0)
root = node_properties(defs, "cluster")
check(f"both hosts merged: HOSTS {root.get('EZIOTRACE::HOSTS')}, "
      f"{root.get('EZIOTRACE::HOSTS_STATUS')}",
      root.get("EZIOTRACE::HOSTS") == "2" and root.get("EZIOTRACE::HOSTS_STATUS") == "complete")
nodes = re.findall(r'^SYSTEM_TREE_NODE\s+\d+\s+Name: "([^"]+)"', defs, re.M)
check(f"each host once in the system tree ({nodes})", all(nodes.count(h) == 1 for h in hosts))
jobs = set()
for h in hosts:
    p = node_properties(defs, h)
    job, step = p.get("EZIOTRACE::SLURM_JOB_ID", ""), p.get("EZIOTRACE::SLURM_STEP_ID", "")
    jobs.add(job)
    check(f"{h} recorded through its eziotraced, Slurm job {job} step {step or 'none'}",
          p.get("EZIOTRACE::RECORDING_PATH") == "eziotraced" and job.isdigit() and
          (step.isdigit() or (h == mpirun_on and not step)))
    check(f"{h}'s clock: offset {p.get('EZIOTRACE::CLOCK_OFFSET_START_NS')} ns, error "
          f"{p.get('EZIOTRACE::CLOCK_ERROR_NS')} ns, drift {p.get('EZIOTRACE::CLOCK_DRIFT_PPM')} ppm",
          int(p.get("EZIOTRACE::CLOCK_ERROR_NS", "0")) > 0 and
          p.get("EZIOTRACE::CLOCK_REFERENCE") == "node1")
    print(f"FIGURES - {name}: {h} offset {p.get('EZIOTRACE::CLOCK_OFFSET_START_NS')} ns error "
          f"{p.get('EZIOTRACE::CLOCK_ERROR_NS')} ns")
check(f"one Slurm job for both hosts ({sorted(jobs)})", len(jobs) == 1)
# Each process (location group) and the system tree node it is under.
host_of = {m.group(1): m.group(2) for m in re.finditer(
    r'^LOCATION_GROUP\s+\d+\s+Name: "([^"]+)".*?Parent: "node::([^"]+)"', defs, re.M)}


def layer_rows(*args):
    rc, out, _ = run_command(eziotrace, "layers", "--json", *args, archive)
    return json.loads(out) if rc == 0 else {}


ranks = {}
for r in layer_rows("--by-process").get("layers", []):
    if r["process"].startswith(program) and r["layer"] == "Syscall":
        ranks[r["process"]] = r
for h in hosts:
    on = sorted(p for p in ranks if host_of.get(p) == h)
    check(f"{h}: its 2 ranks' (tasks') processes under it ({on})", len(on) == 2)
    for p in on:
        check(f"{p}: its 16 writes of 64 KiB ({ranks[p].get('writes', 0)} at the syscall layer)",
              ranks[p].get("writes", 0) >= 16 and ranks[p].get("write_bytes", 0) >= 1 << 20)
by_host = layer_rows("--by-host").get("layers", [])


COUNTS = ("UNATTRIBUTED_REQUESTS", "NOT_ISSUED_REQUESTS")
def windows(host):
    """The host's vda locations' window properties ({NAME_AT_START: n, ...}), those that have them."""
    return [v for v in vda_windows(defs, host)
            if all(k + e in v for k in COUNTS for e in ("_AT_START", "_AT_END"))]


block_count_checks(check, name, defs, by_host, hosts, shared, stat_prefix, gapped)
for h in hosts:
    # Each session's window of the node's table (its device location's values at its start and
    # end): their union is the host's count (docs/cluster.md, "Several parts of one host").
    w = windows(h)
    p = node_properties(defs, h)
    got = [int(p.get("EZIOTRACE::UNATTRIBUTED::vda", -1)), int(p.get("EZIOTRACE::NOT_ISSUED::vda", -1))]
    united = [union_length([(s[k + "_AT_START"], s[k + "_AT_END"]) for s in w]) for k in COUNTS]
    largest = [max((s[k + "_AT_END"] - s[k + "_AT_START"] for s in w), default=0) for k in COUNTS]
    print(f"FIGURES - {name}: {h} {len(w)} sessions' windows: unattributed + not issued: union "
          f"{united[0]} + {united[1]}, the largest session's {largest[0]} + {largest[1]}")
    check(f"{h}: each session's window written, the host's counts their union ({got})",
          len(w) >= 1 and got == united)
    if h in gapped:
        own = [sum(s[k + "_AT_END"] - s[k + "_AT_START"] for s in w) for k in COUNTS]
        check(f"{h}: two sessions one after the other, their windows apart (the union's "
              f"{sum(united)} = the sum of each session's {sum(own)})",
              len(w) == 2 and united == own)
    elif staggered:
        check(f"{h}: two sessions whose windows hold each other's requests in part (the largest "
              f"session's {sum(largest)} short of the union's {sum(united)})",
              len(w) == 2 and sum(largest) < sum(united))
cont = layer_rows().get("containment", [{}])
check(f"no inverted nesting ({cont[0].get('inversions')})", cont[0].get("inversions") == 0)
sys.exit(1 if check.failed else 0)
