#!/usr/bin/python3
"""Dumps every event of an OTF2 archive, per location, as JSON, with python3-otf2.

Unlike tests/support/otf2_dump.py (syscall calls only), this keeps user-level (EZTrace) regions and
the order of all events, so the end-to-end tests can check nesting and the one-for-one mapping.
Output: {"properties": {name: value}, "warnings": [...], "locations": {"<location id>": {"name",
"group", "props", "events": [{"k": kind, "t": time, "r": region canonical name (Enter/Leave),
"p": I/O paradigm identification (I/O events), "h": handle name, "f": file name, "a": {attribute:
value} (Enter), "bytes": bytes request/result}]}}}.  Usage: otf2_events.py ARCHIVE.otf2
"""
import json
import sys
import warnings

import otf2


def value(v):
    return v if isinstance(v, (int, float, str)) or v is None else str(v)


def main(path):
    out = {"properties": {}, "locations": {}, "warnings": []}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with otf2.reader.open(path) as r:
            d = r.definitions
            for p in d.system_tree_node_properties:
                out["properties"][p.name] = value(p.value)
            locs = {}
            for loc in d.locations:
                locs[loc] = {"name": loc.name, "group": loc.group.name, "props": {}, "events": []}
            for p in d.location_properties:
                locs[p.location]["props"][p.name] = value(p.value)
            for p in d.location_group_properties:
                for loc, entry in locs.items():
                    if loc.group == p.location_group:
                        entry["props"][p.name] = value(p.value)
            for loc, ev in r.events:
                kind = type(ev).__name__
                e = {"k": kind, "t": ev.time}
                region = getattr(ev, "region", None)
                if region is not None:
                    e["r"] = region.canonical_name
                    if kind == "Enter" and ev.attributes:
                        e["a"] = {a.name: value(v) for a, v in ev.attributes.items()}
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
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
