#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Checks of cluster.slurm_mpi on an archive of `eziotrace [-t mpich,posixio] -o NAME -- srun -N 2
-n RANKS ...` (job_layers.sh), or of the same job started by hydra or Open MPI's mpirun
(job_ulaunch.sh): one archive, both hosts, every rank's process under its host with EZTrace's MPI
and posixio events and its kernel events (its 1 MiB at the user and syscall layers), the kernel
events nested in their user calls (0 inversions per host), the MPI messages between the hosts
received after they were sent (`eziotrace check`: 0 violations), each host's clock error reported;
each rank once (no stand-in of another host's rank) and one MPI_COMM_WORLD holding every rank, on
both hosts (docs/cluster.md, "One job's communicators").
With --stat PREFIX (two ranks per host): each host's block requests equal its disk's counters'
delta over the step (PREFIX.HOST.before/after, as check_ompi.py).
  check_layers.py EZIOTRACE SHARED_DIR NAME RANKS [--stat PREFIX]   (exit 1 when a check fails)"""
import json
import os
import re
import sys

from cluster_checks import Checks, block_count_checks, read_shared, run_command, step_archive

eziotrace, shared, name, ranks = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
stat_prefix = sys.argv[6] if sys.argv[5:6] == ["--stat"] else ""
hosts = ["node1", "node2"]
check = Checks(name)
run = run_command


archive = step_archive(check, shared, name)
# Each host's merge knows the other hosts' ranks to be in their parts: it does not say they belong
# to no process (converters/cluster/user_layers.cpp).
said = [l for l in read_shared(shared, name + ".out").splitlines() if "belongs to no process" in l]
check(f"no rank of another host said to belong to no process ({said[:2]})", not said)
rc, defs, _ = run("otf2-print", "-G", archive)
check("otf2-print reads its definitions", rc == 0)
# Each process (location group) and the system tree node it is under.
host_of = {}
for m in re.finditer(r'^LOCATION_GROUP\s+\d+\s+Name: "([^"]+)".*?Parent: "node::([^"]+)"', defs,
                     re.M):
    host_of[m.group(1)] = m.group(2)


def comm_checks():
    """One job's communicators: the hosts' parts unified (comm_mapper.h)."""
    group_host = {m.group(1): m.group(3) for m in re.finditer(
        r'^LOCATION_GROUP\s+(\d+)\s+Name: "([^"]*)".*?Parent: "node::([^"]+)"', defs, re.M)}
    location = {}  # id -> (name, its group's host, events)
    for m in re.finditer(r'^LOCATION\s+(\d+)\s+Name: "([^"]*)".*?# Events: (\d+), Group: "[^"]*" '
                         r'<(\d+)>', defs, re.M):
        location[int(m.group(1))] = (m.group(2), group_host.get(m.group(4)), int(m.group(3)))
    stand_ins = re.findall(r'^LOCATION_GROUP\s+\d+\s+Name: "(EZTrace location \d+ \(no alignment '
                           r'data\))"', defs, re.M)
    check(f"no stand-in of another host's rank ({stand_ins})", not stand_ins)
    groups = {}  # id -> (type, members: location ids, or ranks)
    for m in re.finditer(r'^GROUP\s+(\d+)\s+Name: "[^"]*" <\d+>, Type: (\w+), Paradigm: (\w+).*?'
                         r'Members?:?(.*)$', defs, re.M):
        members = [int(x) for x in re.findall(r'<(\d+)>', m.group(4))]
        groups[m.group(1)] = (m.group(2), m.group(3), members)
    located = [g[2] for g in groups.values() if g[0] == "COMM_LOCATIONS" and g[1] == "MPI"]
    check(f"one MPI COMM_LOCATIONS group ({len(located)})", len(located) == 1)
    ranks_at = located[0] if located else []
    check(f"each rank once: {[(r, location.get(r)) for r in ranks_at]}",
          len(ranks_at) == ranks and len(set(ranks_at)) == ranks and
          all(r in location and location[r][0].startswith("mpi_node_io") and location[r][2] > 0
              for r in ranks_at))
    worlds = re.findall(r'^COMM\s+\d+\s+Name: "MPI_COMM_WORLD" <\d+>, Group: "[^"]*" <(\d+)>', defs,
                        re.M)
    check(f"one MPI_COMM_WORLD ({len(worlds)})", len(worlds) == 1)
    world = groups.get(worlds[0], ("", "", []))[2] if worlds else []
    on = sorted({location.get(r, ("", "?"))[1] for r in world})
    check(f"MPI_COMM_WORLD holds every rank ({world}), on {on}",
          sorted(world) == sorted(ranks_at) and len(world) == ranks and on == hosts)


comm_checks()


def rows(*args):
    rc, out, err = run(eziotrace, "layers", "--json", *args, archive)
    return json.loads(out)["layers"] if rc == 0 else []


by_host = rows("--by-host")
for h in hosts:
    user = next((r for r in by_host if r["host"] == h and r["layer"] == "User"), {})
    check(f"{h}: EZTrace's posixio writes of its {ranks // 2} rank(s) ({user.get('writes', 0)})",
          user.get("writes", 0) >= 16 * (ranks // 2))
# Every rank: a process under its host with its 1 MiB written at the user and syscall layers.
per_process = {}
for r in rows("--by-process"):
    per_process.setdefault(r["process"], {})[r["layer"]] = r
app = {p: l for p, l in per_process.items() if p.startswith("mpi_node_io")}
check(f"{ranks} processes of the program ({sorted(app)})", len(app) == ranks)
for p, layers in sorted(app.items()):
    u, s = layers.get("User", {}), layers.get("Syscall", {})
    host = host_of.get(p, "?")
    check(f"{p} on {host}: user {u.get('write_bytes', 0)} B, syscall {s.get('write_bytes', 0)} B "
          f"written", host in hosts and u.get("write_bytes", 0) >= 1 << 20 and
          s.get("write_bytes", 0) >= 1 << 20)
for h in hosts:
    on = [p for p in app if host_of.get(p) == h]
    check(f"{h}: {ranks // 2} rank(s) under it ({on})", len(on) == ranks // 2)
if stat_prefix:
    block_count_checks(check, name, defs, by_host, hosts, shared, stat_prefix)
rc, out, err = run(eziotrace, "check", "--json", archive)
j = json.loads(out) if out.strip().startswith("{") else {}
check(f"check's hosts: {[h.get('host') for h in j.get('hosts', [])]}",
      sorted(h.get("host") for h in j.get("hosts", [])) == hosts)
for h in j.get("hosts", []):
    check(f"{h.get('host')}: {h.get('calls_checked')} calls checked, {h.get('nesting_inversions')} "
          f"nesting inversion(s), clock error {h.get('clock_error_s')} s",
          h.get("nesting_inversions") == 0 and (h.get("calls_checked") or 0) > 0 and
          h.get("clock_error_s") is not None)
print(f"FIGURES - {name}: " + "; ".join(
    f"{h.get('host')} offset {h.get('clock_offset_start_s')} s error {h.get('clock_error_s')} s"
    for h in j.get("hosts", [])))
cross = [m for m in j.get("messages", []) if m.get("sender_host") != m.get("receiver_host")]
check(f"MPI messages between the hosts: {cross}",
      len(cross) == 2 and all(m["messages"] > 0 and m["received_before_sent"] == 0 for m in cross))
c = (j.get("check") or [{}])[0]
check(f"eziotrace check: exit {rc}, {c.get('violations')} violation(s), unmatched sends "
      f"{c.get('unmatched_sends')}, unresolved {c.get('unresolved')}",
      rc == 0 and c.get("violations") == 0)
sys.exit(1 if check.failed else 0)
