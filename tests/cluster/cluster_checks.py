# SPDX-License-Identifier: GPL-2.0-only
"""What the host-side checks of cluster.slurm_mpi share: one line per check, ok or FAIL, and
whether any failed; running an eziotrace command for its status and output."""
import os
import re
import subprocess
import sys


class Checks:
    def __init__(self, name):
        self.name = name
        self.failed = False

    def __call__(self, desc, ok):
        print(("ok   - " if ok else "FAIL - ") + f"{self.name}: {desc}")
        self.failed |= not ok


def run_command(*args):
    """(status, stdout, stderr)"""
    p = subprocess.run(args, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def node_properties(defs, node):
    """The properties of system tree node `node` in `otf2-print -G`'s output, as {name: value text}."""
    out = {}
    for m in re.finditer(r'System Tree Node: "\w+::%s" <\d+>, Name: "([^"]+)" <\d+>, '
                         r'Type: \w+, Value: (?:"([^"]*)"|(\S+))' % re.escape(node), defs):
        out[m.group(1)] = m.group(2) if m.group(2) is not None else m.group(3)
    return out


def read_shared(shared, f):
    """A file the job wrote into the shared directory, or why it could not be read."""
    try:
        return open(os.path.join(shared, f)).read()
    except OSError as e:
        return str(e)


def step_archive(check, shared, name):
    """Checks that step `name` exited 0 and left one archive, its parts removed; returns the
    archive's anchor, or exits 1 when there is none to check further."""
    rc = read_shared(shared, name + ".rc").strip()
    tail = "" if rc == "0" else "; " + read_shared(shared, name + ".out")[-3000:]
    check(f"the step exits 0 ({rc}{tail})", rc == "0")
    archive = os.path.join(shared, name, "eziotrace.otf2")
    check("one archive in DIR, its parts removed", os.path.exists(archive) and
          not os.path.exists(os.path.join(shared, name + ".parts")))
    if not os.path.exists(archive):
        sys.exit(1)
    return archive


def block_count_checks(check, defs, by_host, hosts, shared, stat_prefix):
    """Each host's block requests, as check_step.py counts them: its ranks' (their Block rows of
    `layers --by-host`), the others' during the recording (UNATTRIBUTED) and the empty flushes
    never issued (NOT_ISSUED), equal to its disk's counters' delta (STAT_PREFIX.HOST.before and
    .after, /sys/block/vda/stat read just before and after the step); its 2 ranks' 2 MiB written."""
    def stat(host, when):
        v = [int(x) for x in read_shared(shared, f"{stat_prefix}.{host}.{when}").split()]
        return v[0] + v[4] + v[11] + v[15]  # reads, writes, discards, flushes completed

    for h in hosts:
        b = next((r for r in by_host if r["host"] == h and r["layer"] == "Block"), {})
        p = node_properties(defs, h)
        unattributed = int(p.get("EZIOTRACE::UNATTRIBUTED::vda", 0))
        not_issued = int(p.get("EZIOTRACE::NOT_ISSUED::vda", 0))
        recorded = b.get("reads", 0) + b.get("writes", 0) + b.get("other", 0)
        delta = stat(h, "after") - stat(h, "before")
        check(f"{h}: its ranks' 2 MiB of block writes under it ({b.get('write_bytes', 0)} B)",
              b.get("write_bytes", 0) >= 2 << 20)
        check(f"{h}: block requests recorded {recorded} + unattributed {unattributed} + not "
              f"issued {not_issued} = /sys/block/vda/stat's delta {delta}",
              recorded + unattributed + not_issued == delta)
