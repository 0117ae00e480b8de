# SPDX-License-Identifier: GPL-2.0-only
"""What the host-side checks of cluster.slurm_mpi share: one line per check, ok or FAIL, and
whether any failed; running an eziotrace command for its status and output."""
import re
import subprocess


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
