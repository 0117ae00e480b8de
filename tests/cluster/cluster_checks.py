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
