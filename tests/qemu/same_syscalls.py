#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Whether two recordings of the same workload, one per syscall hook mode (fentry on the syscalls'
functions, the sys_enter/sys_exit tracepoints), recorded the same syscalls with the same content:
per call, its region and the I/O events the call itself wrote (kind, handle's file, bytes, offsets,
mode), the workload's directory in each archive's file names made one. Times, ids, addresses
(mmap's result) and what the layers below the syscall wrote (their hook modes differ too) are left
out. Prints each call kind's count; exit 1 with the difference when they differ.

  same_syscalls.py A.otf2 DIR_A B.otf2 DIR_B
"""
import collections
import sys

sys.path.insert(0, sys.path[0] + "/../support")
import otf2_dump  # noqa: E402


def calls(path, workdir):
    out = collections.Counter()
    for loc in otf2_dump.dump(path)["locations"].values():
        for call in loc["calls"]:
            io = []
            for e in call["io"]:
                e = {k: v for k, v in e.items() if k not in ("handle", "old_handle", "new_handle",
                                                               "matching_id")}
                if "file" in e:
                    e["file"] = e["file"].replace(workdir, "WORKDIR")
                io.append(tuple(sorted(e.items())))
            out[(call["canonical"], tuple(io))] += 1
    return out


def main():
    if len(sys.argv) != 5:
        sys.exit("usage: same_syscalls.py A.otf2 DIR_A B.otf2 DIR_B")
    a, b = calls(sys.argv[1], sys.argv[2]), calls(sys.argv[3], sys.argv[4])
    kinds = collections.Counter()
    for (region, _), n in a.items():
        kinds[region] += n
    print(" ".join(f"{r}={n}" for r, n in sorted(kinds.items())))
    if a == b:
        return 0
    for key in sorted(set(a) | set(b), key=str):
        if a[key] != b[key]:
            print(f"differs: {key}: {a[key]} vs {b[key]}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
