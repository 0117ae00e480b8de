#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Compares two OTF2 archives as `otf2-print -A` shows them, with what differs between two
recordings of the same run masked: timestamps (events, clock properties, the *_NS and EZTrace
time properties), the trace identifier, and with --normalize-ids the process and thread ids
(renumbered in order of first appearance). Used to show that a change of the code leaves the
archives it writes unchanged.

  tests/support/otf2_compare.py A/eziotrace.otf2 B/eziotrace.otf2 [--normalize-ids]
      [--ignore REGEX ...]

Exit 0 when they are identical after masking, 1 with a unified diff otherwise, 2 on bad input.
"""
import argparse
import difflib
import os
import re
import signal
import subprocess
import sys

# Event lines: KIND  LOCATION  TIMESTAMP  ...
EVENT = re.compile(r"^([A-Z_]+)(\s+)(\d+)(\s+)(\d+)(\s+)")
TIME_PROPERTIES = re.compile(
    r'(Name: "EZIOTRACE::(?:[A-Z_]*_NS|EZTRACE_FIRST_TIMESTAMP|EZTRACE_TIME_OFFSET)" <\d+>, '
    r"Type: [A-Z0-9]+, Value: )-?\d+")
# Property values that are process or thread ids, and names that end in " [id]".
ID_PROPERTIES = re.compile(
    r'Name: "EZIOTRACE::(?:PID|PPID|TID|ROOT_PID)" <\d+>, Type: [A-Z0-9]+, Value: (\d+)')
NAMED_ID = re.compile(r'"[^"\[]* \[(\d+)\]"')


def print_archive(anchor):
    if os.path.isdir(anchor):
        anchor = os.path.join(anchor, "eziotrace.otf2")
    if not os.path.exists(anchor):
        sys.exit(f"otf2_compare: {anchor}: no such archive")
    r = subprocess.run(["otf2-print", "-A", anchor], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"otf2_compare: otf2-print {anchor} failed: {r.stderr.strip()}")
    return r.stdout.splitlines()


def mask_times(line):
    if line.startswith("Trace identifier"):
        return "Trace identifier <masked>"
    if line.startswith("CLOCK_PROPERTIES"):
        return "CLOCK_PROPERTIES <masked>"
    m = EVENT.match(line)
    if m:
        line = line[: m.start(5)] + "T" + line[m.end(5):]
    return TIME_PROPERTIES.sub(r"\1T", line)


def id_map(lines):
    """The ids in order of first appearance: 1234 -> 'ID1'."""
    ids = {}
    for line in lines:
        for pattern in (ID_PROPERTIES, NAMED_ID):
            for m in pattern.finditer(line):
                if int(m.group(1)) > 1:  # 0 and 1 (no parent, init) are the same in any run
                    ids.setdefault(m.group(1), f"ID{len(ids) + 1}")
    return ids


def normalize_ids(lines):
    ids = id_map(lines)
    if not ids:
        return lines
    word = re.compile(r"\b(" + "|".join(sorted(ids, key=len, reverse=True)) + r")\b")
    return [word.sub(lambda m: ids[m.group(1)], line) for line in lines]


def masked(anchor, args):
    lines = [mask_times(l) for l in print_archive(anchor)]
    if args.normalize_ids:
        lines = normalize_ids(lines)
    # otf2-print pads its columns to the widths of the values: ids of other lengths move them.
    lines = [re.sub(r" {2,}", "  ", l) for l in lines]
    ignore = [re.compile(p) for p in args.ignore]
    return [l for l in lines if not any(p.search(l) for p in ignore)]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("a")
    p.add_argument("b")
    p.add_argument("--normalize-ids", action="store_true",
                   help="renumber process and thread ids (two recordings, not one re-written)")
    p.add_argument("--ignore", action="append", default=[], metavar="REGEX",
                   help="leave out the lines that match (after masking)")
    args = p.parse_args()
    a, b = masked(args.a, args), masked(args.b, args)
    if a == b:
        print(f"identical except timestamps: {len(a)} lines")
        return 0
    sys.stdout.writelines(l + "\n" for l in difflib.unified_diff(a, b, args.a, args.b, n=1))
    return 1


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends the diff quietly
    sys.exit(main())
