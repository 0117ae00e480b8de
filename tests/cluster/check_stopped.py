#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Checks of cluster.slurm_mpi's "eziotraced stopped mid-job" step (job.sh: kstop): node2's
eziotraced was stopped while the step's tasks were recording, before they wrote. The archive must
hold both hosts, say node2's part is incomplete and why, never present it as complete; node1's
part is whole; exit status 4; every analyzer opens it.
  check_stopped.py EZIOTRACE SHARED_DIR   (exit 1 when a check fails)"""
import json
import os
import shutil
import sys
import tempfile

from cluster_checks import Checks, node_properties, read_shared, run_command

eziotrace, shared = sys.argv[1:3]
name = "kstop"
check = Checks(name)


def run(*args):
    """(status, stdout): the analyzers warn on stderr that the recording was interrupted."""
    return run_command(*args)[:2]


def read(f):
    return read_shared(shared, f).strip()


check(f"node2's eziotraced was stopped by root on node2 (status {read('kstop-admin.rc')})",
      read("kstop-admin.rc") == "0")
check(f"the step exits 4, the archive partial (status {read('kstop.rc')})", read("kstop.rc") == "4")
check(f"node2's eziotraced started again ({read('kstart-admin.rc')})",
      read("kstart-admin.rc") == "0")
archive = os.path.join(shared, name, "eziotrace.otf2")
check("one archive in DIR, its parts kept beside it", os.path.exists(archive) and
      os.path.isdir(os.path.join(shared, name + ".parts")))
if not os.path.exists(archive):
    sys.exit(1)
rc, defs = run("otf2-print", "-G", archive)
check("otf2-print reads its definitions", rc == 0)


def props(node):
    return node_properties(defs, node)


root, n1, n2 = props("cluster"), props("node1"), props("node2")
hs = root.get("EZIOTRACE::HOSTS_STATUS", "")
check(f"both hosts merged, none missing (HOSTS {root.get('EZIOTRACE::HOSTS')}, "
      f"HOSTS_MISSING {root.get('EZIOTRACE::HOSTS_MISSING')})",
      root.get("EZIOTRACE::HOSTS") == "2" and root.get("EZIOTRACE::HOSTS_MISSING") == "0")
check(f"HOSTS_STATUS names node2, its recording interrupted by its eziotraced, and not node1: {hs}",
      hs.startswith("partial: node2 (") and "merged, its recording interrupted" in hs and
      "eziotraced closed the connection" in hs and "node1 (" not in hs)
check(f"the archive's STATUS is not complete ({root.get('EZIOTRACE::STATUS')})",
      root.get("EZIOTRACE::STATUS") == "node2: interrupted")
check(f"node2's part: STATUS {n2.get('EZIOTRACE::STATUS')}, "
      f"STATUS_REASON {n2.get('EZIOTRACE::STATUS_REASON')}",
      n2.get("EZIOTRACE::STATUS") == "interrupted" and
      "loss counters unknown" in n2.get("EZIOTRACE::STATUS_REASON", ""))
check(f"node1's part is whole (STATUS {n1.get('EZIOTRACE::STATUS')})",
      n1.get("EZIOTRACE::STATUS") == "complete" and "EZIOTRACE::STATUS_REASON" not in n1)
rc, out = run(eziotrace, "layers", "--by-host", "--json", archive)
rows = json.loads(out)["layers"] if rc == 0 else []


def writes(host):
    return next((r for r in rows if r["host"] == host and r["layer"] == "Syscall"), {}).get(
        "writes", 0)


check(f"node1's task's 16 writes are recorded ({writes('node1')})", writes("node1") >= 16)
check(f"node2's writes after its service stopped are not ({writes('node2')})", writes("node2") < 16)
for a in ["layers", "files", "latency", "profile", "collective", "advise", "check"]:
    rc, out = run(eziotrace, a, archive)
    check(f"eziotrace {a} opens it (status {rc})", rc == 0 or (a == "check" and rc == 3))
views = tempfile.mkdtemp(prefix="ezio-kstop-")  # not the shared directory: run again, it works
rc, out = run(eziotrace, "report", archive, "-o", os.path.join(views, name + ".html"))
check(f"eziotrace report opens it (status {rc})", rc == 0)
for fmt in ["paje", "perfetto"]:
    rc, out = run(eziotrace, "export", archive, "--format", fmt, "-o",
                  os.path.join(views, f"{name}.{fmt}"))
    check(f"eziotrace export --format {fmt} (status {rc})", rc == 0)
shutil.rmtree(views, ignore_errors=True)
sys.exit(1 if check.failed else 0)
