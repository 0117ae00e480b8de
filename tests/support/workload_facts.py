# SPDX-License-Identifier: GPL-2.0-only
"""Reads an archive that eziotrace recorded of tests/programs/layers_workload.cpp in the qemu VM, through
the one python OTF2 oracle (otf2_dump.events, python3-otf2: Debian's /usr/bin/python3), and prints, one per line and tab-separated, the facts
tests/qemu/record-layers.sh asserts on beyond `tests/support/otf2_dump.py --tsv`:

  workload_tid <tid>                        the thread that made the workload's calls
  derived <n>                               VFS events with vfs.derived = 1
  inside <region>|<path> <n>                exact VFS events strictly inside their syscall
  fs <chain>|<path> <n> <bytes> <offsets> <result>
                                            FS events nested syscall > VFS > FS on a file of the
                                            workload (the VFS event's path), with the sums of their
                                            fs.bytes, fs.offset and fs.result ("-" when no event
                                            has that attribute)
  fs_inside <chain>|<path> <n>              those with a duration, on the VFS event's inode,
                                            strictly inside the VFS event: hooked, not clamped
  fs_count <region> <n>                     FS events, wherever they are nested
  vfs_count <region> <n>                    VFS events, wherever they are nested
  vfs_unseen <syscall region> <n>           successful calls of a syscall that always reaches
                                            its VFS function with no VFS event inside: each must
                                            be counted in EZIOTRACE::LOST::vfs
  lost <layer> <n>                          EZIOTRACE::LOST::<layer>
  file <path> 1                             an IoRegularFile of the archive under the directory
  pagecache_threads <n>                     threads with page-cache counters
  pagecache <member> <value>                the workload thread's last page-cache counters
  block_other_threads <n>                   block requests attributed to another thread
  block_count <call region>><op> <n>        requests attributed to the workload, by the region of
  block_bytes <call region>><op> <bytes>    the call they link to (call.id) and their operation

Paths are those under the directory given, the workload's."""
import collections
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import otf2_dump  # noqa: E402

# Syscalls that call a hooked VFS function whenever they succeed (read -> vfs_read, ...); a failed
# one may have stopped before it.
VFS_SYSCALLS = {"read", "write", "pread64", "pwrite64", "readv", "writev", "fsync", "fdatasync",
                "open", "openat", "openat2", "creat"}


def print_facts(kind, table):
    """One "<kind>\t<key>\t<value>" line per entry, in key order."""
    for k, v in sorted(table.items()):
        print(f"{kind}\t{k}\t{v}")


def workload_thread(dump):
    """The thread that made the workload's pwrite64 calls (the latest one, if several did)."""
    latest = None
    for loc in dump["locations"].values():
        for e in loc["events"]:
            if e["k"] == "Enter" and e.get("r") == "syscall:pwrite64" and "call.id" in e.get("a", {}):
                if latest is None or e["t"] >= latest[0]:
                    latest = (e["t"], loc["props"].get("EZIOTRACE::TID"))
    return None if latest is None else latest[1]


def main(anchor, workdir):
    dump = otf2_dump.events(anchor, all_attributes=True)
    calls = {}  # call.id -> syscall region
    inside = collections.Counter()
    derived = 0
    pagecache = {}
    requests = []
    fs_sums = collections.defaultdict(lambda: [0, None, None, None])  # n, bytes, offsets, result
    fs_inside = collections.Counter()
    fs_count = collections.Counter()
    vfs_count = collections.Counter()
    vfs_unseen = collections.Counter()
    lost = {k.split("::")[-1]: int(v) for k, v in dump["properties"].items()
            if k.startswith("EZIOTRACE::LOST::")}
    files = {f: 1 for f in dump["files"] if f.startswith(workdir + "/")}
    workload_tid = workload_thread(dump)
    for loc in dump["locations"].values():
        # [name, enter time, attrs, children, has a VFS event inside]
        stack = []
        for ev in loc["events"]:
            kind, a = ev["k"], ev.get("a", {})
            if kind == "Enter":
                name = ev["r"]
                if name.startswith("syscall:") and "call.id" in a:
                    calls[int(a["call.id"])] = name
                stack.append([name, ev["t"], a, [], False])
            elif kind == "Leave" and stack:
                name, t_enter, a, children, has_vfs = stack.pop()
                parent = stack[-1] if stack else None
                if name.startswith("vfs:"):
                    vfs_count[name] += 1
                    if parent and parent[0].startswith("syscall:"):
                        parent[4] = True
                    derived += int(a.get("vfs.derived", 0))
                    path = str(a.get("vfs.path", ""))
                    if parent and parent[0].startswith("syscall:") and path.startswith(workdir + "/"):
                        parent[3].append((f"{name}|{path}", t_enter, ev["t"]))
                    # FS events are checked against this VFS event once its leave is known.
                    for key, f_enter, f_leave, fa in children:
                        if (int(fa.get("fs.point", 1)) == 0 and "fs.result" in fa
                                and fa.get("fs.inode") == a.get("vfs.inode")
                                and t_enter < f_enter and f_leave < ev["t"]):
                            fs_inside[key] += 1
                elif name.startswith("fs:"):
                    fs_count[name] += 1
                    grand = stack[-2] if len(stack) >= 2 else None
                    if (parent and parent[0].startswith("vfs:") and grand
                            and grand[0].startswith("syscall:")):
                        path = str(parent[2].get("vfs.path", ""))
                        if path.startswith(workdir + "/"):
                            key = f"{grand[0]}>{parent[0]}>{name}|{path}"
                            parent[3].append((key, t_enter, ev["t"], a))
                            sums = fs_sums[key]
                            sums[0] += 1
                            for i, attr in ((1, "fs.bytes"), (2, "fs.offset"), (3, "fs.result")):
                                if attr in a:
                                    sums[i] = (sums[i] or 0) + int(a[attr])
                elif name.startswith("syscall:"):
                    if (name.split(":")[1] in VFS_SYSCALLS and int(a.get("syscall.result", -1)) >= 0
                            and not has_vfs):
                        vfs_unseen[name] += 1
                    # Exact VFS times fall strictly between the syscall's: the hooks fire inside
                    # it. Derived ones are the syscall's own times.
                    for key, c_enter, c_leave in children:
                        if t_enter < c_enter and c_leave < ev["t"]:
                            inside[key] += 1
            elif kind == "Metric" and loc["name"].startswith("pagecache "):
                # One location per process; each event is one thread's sample, its counters
                # as attributes (docs/trace-model.md, Page-cache layer).
                pagecache[int(a["pagecache.tid"])] = {
                    "pagecache." + k[len("pagecache.thread."):]: int(v) for k, v in a.items()
                    if k.startswith("pagecache.thread.")}
            elif kind == "IoOperationBegin" and loc["name"].startswith("block "):
                requests.append((int(a["block.tid"]), int(a["call.id"]), str(a["block.op"]),
                                 int(ev["bytes"])))
    print(f"workload_tid\t{workload_tid}")
    print(f"derived\t{derived}")
    print_facts("inside", inside)
    for k, sums in sorted(fs_sums.items()):
        print("fs\t" + "\t".join([k] + ["-" if v is None else str(v) for v in sums]))
    print_facts("fs_inside", fs_inside)
    print_facts("fs_count", fs_count)
    print_facts("vfs_count", vfs_count)
    print_facts("vfs_unseen", vfs_unseen)
    print_facts("lost", lost)
    print_facts("file", files)
    print(f"pagecache_threads\t{len(pagecache)}")
    for k, v in sorted(pagecache.get(workload_tid, {}).items()):
        print(f"pagecache\t{k}\t{v}")
    other = sum(1 for tid, _, _, _ in requests if tid != workload_tid)
    print(f"block_other_threads\t{other}")
    count = collections.Counter()
    nbytes = collections.Counter()
    for tid, call_id, op, size in requests:
        if tid != workload_tid:
            continue
        region = calls.get(call_id, "none").split(":")[-1]
        count[f"{region}>{op}"] += 1
        nbytes[f"{region}>{op}"] += size
    for k in sorted(count):
        print(f"block_count\t{k}\t{count[k]}")
        print(f"block_bytes\t{k}\t{nbytes[k]}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2].rstrip("/"))
