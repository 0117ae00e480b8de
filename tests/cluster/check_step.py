#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Checks of cluster.slurm_mpi on the archive of `eziotrace -o NAME -- srun ...` (job.sh): one
archive in the shared directory for the whole step, both hosts in its system tree with their Slurm
job and clock data, every rank's kernel events (and EZTrace's with --user), each host's block
requests equal to its disk's counters' delta (job.sh read them just before and after the step), and
no inverted nesting.
  check_step.py EZIOTRACE SHARED_DIR NAME STAT_PREFIX|- [--user]   (exit 1 when a check fails;
  -: no counters to compare)"""
import json
import sys

from cluster_checks import (Checks, check_device_requests, device_stat_requests, node_properties,
                            run_command, step_archive)

eziotrace, shared, name, stat_prefix = sys.argv[1:5]
user = "--user" in sys.argv[5:]
hosts = ["node1", "node2"]
check = Checks(name)


def run(*args):
    rc, out, err = run_command(*args)
    return rc, out + err


archive = step_archive(check, shared, name)
rc, defs = run("otf2-print", "-G", archive)
check("otf2-print reads its definitions", rc == 0)


def props(node):
    return node_properties(defs, node)


root = props("cluster")
check(f"both hosts merged: HOSTS {root.get('EZIOTRACE::HOSTS')}, "
      f"{root.get('EZIOTRACE::HOSTS_STATUS')}",
      root.get("EZIOTRACE::HOSTS") == "2" and root.get("EZIOTRACE::HOSTS_STATUS") == "complete")
for h in hosts:
    p = props(h)
    check(f"{h} is a system tree node recorded through its eziotraced, Slurm job "
          f"{p.get('EZIOTRACE::SLURM_JOB_ID')} step {p.get('EZIOTRACE::SLURM_STEP_ID')}",
          p.get("EZIOTRACE::RECORDING_PATH") == "eziotraced" and
          p.get("EZIOTRACE::SLURM_JOB_ID", "").isdigit() and
          p.get("EZIOTRACE::SLURM_STEP_ID", "").isdigit())
    check(f"{h}'s clock: offset {p.get('EZIOTRACE::CLOCK_OFFSET_START_NS')} ns, error "
          f"{p.get('EZIOTRACE::CLOCK_ERROR_NS')} ns, drift {p.get('EZIOTRACE::CLOCK_DRIFT_PPM')} ppm",
          int(p.get("EZIOTRACE::CLOCK_ERROR_NS", "0")) > 0 and
          p.get("EZIOTRACE::CLOCK_REFERENCE") == "node1")

rc, out = run(eziotrace, "layers", "--by-host", "--json", archive)
rows = json.loads(out)["layers"] if rc == 0 else []


def row(host, layer):
    return next((r for r in rows if r["host"] == host and r["layer"] == layer), {})


for h in hosts:
    w = row(h, "Syscall").get("writes", 0)
    check(f"{h}: its rank's 16 writes of 64 KiB at least (syscall layer: {w})", w >= 16)
    if user:
        p = row(h, "User")
        check(f"{h}: EZTrace's posixio events of its rank ({p.get('writes', 0)} writes)",
              p.get("writes", 0) >= 16)
    if stat_prefix == "-":
        continue
    # The device's requests (cluster_checks.check_device_requests): the rank's (its Block rows),
    # the others' on that device during the recording and the empty PREFLUSH requests the block
    # layer completed without issuing them (docs/kernel-layers.md, "Flushes and the disk
    # statistics").
    b = row(h, "Block")
    recorded = b.get("reads", 0) + b.get("writes", 0) + b.get("other", 0)
    check(f"{h}: its rank's block writes are under its host ({b.get('write_bytes', 0)} B)",
          b.get("writes", 0) >= 1 and b.get("write_bytes", 0) >= 1 << 20)
    check_device_requests(check, name, h, defs, recorded,
                          device_stat_requests(shared, stat_prefix, h, "before"),
                          device_stat_requests(shared, stat_prefix, h, "after"))
rc, out = run(eziotrace, "layers", "--json", archive)
inv = json.loads(out)["containment"][0]["inversions"] if rc == 0 else None
check(f"no inverted nesting ({inv})", inv == 0)
sys.exit(1 if check.failed else 0)
