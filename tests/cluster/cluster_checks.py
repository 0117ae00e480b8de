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


def vda_windows(defs, host):
    """Each of `host`'s "block vda" locations' *_AT_START/_AT_END properties, as {NAME: value}."""
    group_host = dict(re.findall(
        r'^LOCATION_GROUP\s+(\d+)\s+Name: "[^"]+".*?Parent: "node::([^"]+)"', defs, re.M))
    location_host = {loc: group_host.get(g) for loc, g in re.findall(
        r'^LOCATION\s+(\d+)\s+Name: "block vda".*Group: "[^"]*" <(\d+)>', defs, re.M)}
    props = {}
    for loc, key, value in re.findall(
            r'Location: "block vda" <(\d+)>, Name: "EZIOTRACE::(\w+_AT_(?:START|END))" <\d+>, '
            r'Type: UINT64, Value: (\d+)', defs):
        if location_host.get(loc) == host:
            props.setdefault(loc, {})[key] = int(value)
    return list(props.values())


def union_length(ranges):
    """The length of the union of the ranges [a, b] (an empty one, b <= a, adds nothing)."""
    total, covered = 0, None
    for a, b in sorted(ranges):
        if b <= a:
            continue
        start = a if covered is None else max(a, covered)
        total += max(0, b - start)
        covered = b if covered is None else max(covered, b)
    return total


def device_gap(windows):
    """The device's own requests between the sessions' windows, while none was open: the span of
    their [DEVICE_REQUESTS_AT_START, _AT_END] ranges less their union (the count never decreases,
    so windows apart in time are apart in its values too)."""
    ranges = [(x["DEVICE_REQUESTS_AT_START"], x["DEVICE_REQUESTS_AT_END"]) for x in windows]
    if not ranges:
        return 0
    return max(b for _, b in ranges) - min(a for a, _ in ranges) - union_length(ranges)


def check_device_requests(check, name, host, defs, recorded, before, after, gapped=False):
    """The host's vda requests in the archive against its /sys/block/vda/stat counts `before` and
    `after` the step (reads + writes + discards + flushes): the requests of its sessions' Block
    rows (`recorded`), the others' during them (UNATTRIBUTED::vda), the empty flushes never issued
    (NOT_ISSUED::vda) and those between two of its sessions (OUTSIDE_WINDOWS::vda) equal the
    device's own count from its first session's start to its last one's end, which each session
    read with the table (DEVICE_REQUESTS_AT_START/_AT_END); what the device completed before
    the first or after the last, when no session was open, is no recording's: measured and
    printed. Those between its sessions must be the device's own between its windows (more than
    0 when `gapped`: the step wrote there while no session was open). Without the device's counts
    (an older eziotraced), the whole delta."""
    p = node_properties(defs, host)
    counts = [int(p.get(f"EZIOTRACE::{k}::vda", 0))
              for k in ("UNATTRIBUTED", "NOT_ISSUED", "OUTSIDE_WINDOWS")]
    total = recorded + sum(counts)
    text = (f"recorded {recorded} + unattributed {counts[0]} + not issued {counts[1]} + between "
            f"sessions {counts[2]} = {total}")
    w = [x for x in vda_windows(defs, host)
         if "DEVICE_REQUESTS_AT_START" in x and "DEVICE_REQUESTS_AT_END" in x]
    if not w:
        check(f"{host}: block requests {text} = /sys/block/vda/stat's delta {after - before}",
              total == after - before)
        return
    first = min(x["DEVICE_REQUESTS_AT_START"] for x in w)
    last = max(x["DEVICE_REQUESTS_AT_END"] for x in w)
    print(f"FIGURES - {name}: {host} vda requests: {first - before} before its first session, "
          f"{last - first} from its first session's start to its last one's end, "
          f"{after - last} after (stat delta {after - before})")
    check(f"{host}: its sessions read the device's counts within the step's ({before} <= "
          f"{first} <= {last} <= {after})", before <= first <= last <= after)
    check(f"{host}: block requests {text} = the device's own count over its sessions "
          f"{last - first}", total == last - first)
    between = device_gap(w)
    print(f"FIGURES - {name}: {host} vda requests between its {len(w)} sessions' windows: the "
          f"device's {between}, the archive's {counts[2]} (= {last - first} - {recorded} recorded "
          f"- {counts[0]} unattributed - {counts[1]} not issued: "
          f"{last - first - recorded - counts[0] - counts[1]})")
    check(f"{host}: its requests between its sessions {counts[2]} = the device's own between "
          f"its windows {between}" + (", more than 0" if gapped else ""),
          counts[2] == between and (between > 0 or not gapped))
    if gapped:
        # The step's 4 x 64 KiB written in the gap, by the disk's own sectors.
        gap_bytes = int(p.get("EZIOTRACE::OUTSIDE_WINDOWS_BYTES::vda", 0))
        check(f"{host}: the bytes between its sessions ({gap_bytes}) hold the 256 KiB written "
              f"there", gap_bytes >= 256 << 10)


def device_stat_requests(shared, stat_prefix, host, when):
    """The requests /sys/block/vda/stat says the host's disk completed (reads, writes, discards,
    flushes), as the step's job saved it in STAT_PREFIX.HOST.before or .after."""
    v = [int(x) for x in read_shared(shared, f"{stat_prefix}.{host}.{when}").split()]
    return v[0] + v[4] + v[11] + v[15]


def block_count_checks(check, name, defs, by_host, hosts, shared, stat_prefix, gapped=()):
    """Each host's block requests, its ranks' being their Block rows of `layers --by-host`, as
    check_device_requests counts them (`gapped`: the hosts whose sessions leave a gap in which
    their disk worked); its ranks' 2 MiB written under it."""
    for h in hosts:
        b = next((r for r in by_host if r["host"] == h and r["layer"] == "Block"), {})
        recorded = b.get("reads", 0) + b.get("writes", 0) + b.get("other", 0)
        check(f"{h}: its ranks' 2 MiB of block writes under it ({b.get('write_bytes', 0)} B)",
              b.get("write_bytes", 0) >= 2 << 20)
        check_device_requests(check, name, h, defs, recorded,
                              device_stat_requests(shared, stat_prefix, h, "before"),
                              device_stat_requests(shared, stat_prefix, h, "after"),
                              h in gapped)
