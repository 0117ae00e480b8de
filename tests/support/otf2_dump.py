#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Dumps an OTF2 archive as JSON with python3-otf2, a reader independent of ours.

Per location: its properties and the syscall-layer calls (ENTER/LEAVE of `syscall:*` regions) with
their attributes, the I/O events written inside them and the regions nested in them ("inside");
I/O events outside any region (block requests) with their attributes ("loose_io"); Metric events
("metrics": the class's members, their last values, the number of samples and, for page-cache
samples, each thread's last totals from the attributes `pagecache.tid` and `pagecache.thread.*`);
the regular files ("files"); over all locations, how often each region was entered inside
each other ("nesting": "parent>region", parent "-" at the top) and each VFS call's path and file
system ("vfs_calls": "region|vfs.path|vfs.fstype").
With --events: every event instead, per location and in order, user-level (EZTrace) regions
included, for the end-to-end tests' nesting and one-for-one checks, and python3-otf2's warnings:
{"properties", "warnings": [...], "locations": {"<id>": {"name", "group", "props", "events":
[{"k": kind, "t": time, "r": region canonical name (Enter/Leave), "p": I/O paradigm
identification, "h": handle name, "f": file name, "a": {attribute: value} (Enter), "bytes": bytes
request/result}]}}}; no structural check. events(path, all_attributes=True) (for other tests/support
modules, e.g. workload_facts.py) also gives every event's attributes as "a" and the regular files
as "files".
With --mpi: the MPI events, with what their communicator says (the merge's MPI tests):
{"warnings": [...], "events": [{"loc": location id, "k": kind, "comm": communicator name,
"members": its members (location ids, in rank order), "peer": the peer location of a
point-to-point event}]}.
Usage: otf2_dump.py [--events|--mpi] ARCHIVE.otf2 (JSON), or otf2_dump.py --tsv ARCHIVE.otf2: one
line per fact the qemu layer tests (tests/qemu/record-layers.sh) grep for, tab-separated,
`pair<TAB>parent>region<TAB>count`, `vfs<TAB>region|path|fstype<TAB>count` and
`probe<TAB>layer<TAB>hook`. A nesting or time-order error ends either with a message, exit 1.
"""
import json
import sys
import warnings

import otf2

import trace_model


value = trace_model.value


def properties_of_locations(d):
    """Each location's properties and its group's, by location."""
    props = {loc: {} for loc in d.locations}
    for p in d.location_properties:
        props[p.location][p.name] = value(p.value)
    for p in d.location_group_properties:
        for loc, entry in props.items():
            if loc.group == p.location_group:
                entry[p.name] = value(p.value)
    return props


def dump(path):
    out = {"properties": {}, "locations": {}, "clock": {}, "files": [], "nesting": {},
           "vfs_calls": {}}
    with otf2.reader.open(path) as r:
        d = r.definitions
        cp = d.clock_properties
        out["clock"] = {"resolution": cp.timer_resolution, "offset": cp.global_offset,
                        "length": cp.trace_length}
        for p in d.system_tree_node_properties:
            out["properties"][p.name] = value(p.value)
        out["files"] = trace_model.regular_files(d)
        props = properties_of_locations(d)
        locs = {}
        for loc in d.locations:
            locs[loc] = {"name": loc.name, "group": loc.group.name, "events": loc.number_of_events,
                         "type": str(loc.type).split(".")[-1],
                         "calls": [], "other_regions": {}, "props": props[loc]}
        stack = {}
        last_time = {}
        for loc, ev, attrs in trace_model.events(r):
            entry = locs[loc]
            if ev.time < last_time.get(loc, 0):
                raise SystemExit(f"time goes backwards on {loc.name}")
            last_time[loc] = ev.time
            kind = type(ev).__name__
            st = stack.setdefault(loc, [])
            if kind == "Enter":
                call = {"name": ev.region.name, "canonical": ev.region.canonical_name,
                        "t0": ev.time, "io": []}
                call.update(attrs)
                pair = (st[-1]["canonical"] if st else "-") + ">" + call["canonical"]
                out["nesting"][pair] = out["nesting"].get(pair, 0) + 1
                if call["canonical"].startswith("vfs:"):
                    key = f'{call["canonical"]}|{call.get("vfs.path", "")}|{call.get("vfs.fstype", "")}'
                    out["vfs_calls"][key] = out["vfs_calls"].get(key, 0) + 1
                st.append(call)
            elif kind == "Leave":
                if not st or st[-1]["canonical"] != ev.region.canonical_name:
                    raise SystemExit(f"unbalanced LEAVE of {ev.region.name} on {loc.name}")
                call = st.pop()
                call["t1"] = ev.time
                if call["canonical"].startswith("syscall:"):
                    entry["calls"].append(call)
                else:
                    entry["other_regions"][call["canonical"]] = \
                        entry["other_regions"].get(call["canonical"], 0) + 1
                    if st:  # a VFS or FS event inside a call: kept with its attributes
                        st[-1].setdefault("inside", []).append(call)
            elif kind == "Metric":
                m = entry.setdefault("metrics", {"members": [x.name for x in ev.metric.members],
                                                 "samples": 0, "threads": {}})
                m["samples"] += 1
                m["last"] = [value(v) for v in ev.values]
                a = attrs
                if "pagecache.tid" in a:
                    m["threads"][str(a["pagecache.tid"])] = {
                        k[len("pagecache.thread."):]: v for k, v in a.items()
                        if k.startswith("pagecache.thread.")}
            elif kind.startswith("Io") and not st:  # e.g. a block device's requests
                io = {"kind": kind, "t": ev.time, "id": value(getattr(ev, "matching_id", 0))}
                for attr in ("bytes_request", "mode"):
                    if hasattr(ev, attr):
                        io[attr] = value(getattr(ev, attr))
                h = getattr(ev, "handle", None)
                if h is not None and h.file is not None:
                    io["file"] = h.file.name
                io.update(attrs)  # call.id: the call that caused it
                entry.setdefault("loose_io", []).append(io)
            elif kind.startswith("Io") and st:
                io = {"kind": kind}
                for attr in ("handle", "old_handle", "new_handle"):
                    h = getattr(ev, attr, None)
                    if h is not None:
                        io[attr] = h.name
                        if attr == "handle" and h.file is not None:
                            io["file"] = h.file.name
                for attr in ("bytes_request", "bytes_result", "matching_id", "offset_request",
                             "offset_result", "mode"):
                    if hasattr(ev, attr):
                        io[attr] = value(getattr(ev, attr))
                st[-1]["io"].append(io)
        for loc, st in stack.items():
            if st:
                raise SystemExit(f"{len(st)} regions left open on {loc.name}")
        out["locations"] = {str(loc._ref): e for loc, e in locs.items()}
    return out


attributes_of = trace_model.attrs_of


def events(path, all_attributes=False):
    """Every event, per location, in file order, with the reader's warnings (--events); with
    all_attributes, the attributes of every event (not only ENTER's) and the regular files."""
    out = {"properties": {}, "locations": {}, "warnings": []}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with otf2.reader.open(path) as r:
            d = r.definitions
            for p in d.system_tree_node_properties:
                out["properties"][p.name] = value(p.value)
            props = properties_of_locations(d)
            if all_attributes:
                out["files"] = trace_model.regular_files(d)
            locs = {}
            for loc in d.locations:
                locs[loc] = {"name": loc.name, "group": loc.group.name, "props": props[loc],
                             "events": []}
            for loc, ev, attrs in trace_model.events(r):
                kind = type(ev).__name__
                e = {"k": kind, "t": ev.time}
                region = getattr(ev, "region", None)
                if region is not None:
                    e["r"] = region.canonical_name
                if attrs and (all_attributes or (region is not None and kind == "Enter")):
                    e["a"] = attrs
                handle = getattr(ev, "handle", None)
                if handle is not None:
                    e["h"] = handle.name
                    if handle.io_paradigm is not None:
                        e["p"] = handle.io_paradigm.identification
                    if handle.file is not None:
                        e["f"] = handle.file.name
                for attr in ("bytes_request", "bytes_result"):
                    if hasattr(ev, attr):
                        e["bytes"] = value(getattr(ev, attr))
                locs[loc]["events"].append(e)
            out["locations"] = {str(loc._ref): e for loc, e in locs.items()}
        out["warnings"] = [str(w.message) for w in caught]
    return out

def mpi_events(path):
    """The MPI events with their communicator's name, members and the peer location (--mpi)."""
    out = {"events": [], "warnings": []}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with otf2.reader.open(path) as r:
            for loc, ev in r.events:
                kind = type(ev).__name__
                if not kind.startswith("Mpi"):
                    continue
                e = {"loc": loc._ref, "k": kind}
                comm = getattr(ev, "communicator", None)
                if comm is not None:
                    e["comm"] = comm.name
                    e["members"] = [m._ref for m in comm.group.members]
                    for peer in ("receiver", "sender"):
                        if hasattr(ev, peer):
                            e["peer"] = e["members"][getattr(ev, peer)]
                out["events"].append(e)
        out["warnings"] = [str(w.message) for w in caught]
    return out


def print_tsv(out):
    for k, n in sorted(out["nesting"].items()):
        print(f"pair\t{k}\t{n}")
    for k, n in sorted(out["vfs_calls"].items()):
        print(f"vfs\t{k}\t{n}")
    probes = {k.split("::")[-1]: v for k, v in out["properties"].items()
              if k.startswith("EZIOTRACE::PROBE::")}
    for k, v in sorted(probes.items()):
        print(f"probe\t{k}\t{v}")


if __name__ == "__main__":
    if sys.argv[1] == "--tsv":
        print_tsv(dump(sys.argv[2]))
    elif sys.argv[1] == "--events":
        json.dump(events(sys.argv[2]), sys.stdout)
    elif sys.argv[1] == "--mpi":
        json.dump(mpi_events(sys.argv[2]), sys.stdout)
    else:
        json.dump(dump(sys.argv[1]), sys.stdout)
