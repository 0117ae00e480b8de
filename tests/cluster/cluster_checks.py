# SPDX-License-Identifier: GPL-2.0-only
"""What the host-side checks of cluster.slurm_mpi share: one line per check, ok or FAIL, and
whether any failed; running an eziotrace command for its status and output."""
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
