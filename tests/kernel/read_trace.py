#!/usr/bin/python3
"""Prints, as JSON, what the kernel-layer tests check in an eziotrace archive, read with the
independent python3-otf2 reader (Debian's /usr/bin/python3): block requests with their
attribution, unattributed counts per device, the last page-cache counters per thread (with the
reclaimed pages of its process), the
thread of every recorded call, the machine's EZIOTRACE:: properties, the regular files and how many
writes each got."""
import json
import sys

import otf2


def attrs(event):
    out = {}
    for a, v in (event.attributes or {}).items():
        out[a.name] = v if isinstance(v, (int, float)) else str(v)
    return out


def main(anchor):
    result = {"block": [], "unattributed": {}, "pagecache": {}, "calls": {}, "lost": {},
              "properties": {}, "files": [], "writes": {}}
    with otf2.reader.open(anchor) as trace:
        defs = trace.definitions
        for p in defs.system_tree_node_properties:
            result["properties"][p.name] = p.value if isinstance(p.value, (int, float)) else str(p.value)
        result["files"] = sorted(f.name for f in defs.io_regular_files)
        for p in defs.location_properties:
            if p.name == "EZIOTRACE::UNATTRIBUTED_REQUESTS":
                result["unattributed"][p.location.name] = int(p.value)
        for p in defs.system_tree_node_properties:
            if p.name.startswith("EZIOTRACE::LOST::"):
                result["lost"][p.name.split("::")[-1]] = int(p.value)
        tids = {}
        reclaimed = {}
        threads_of = {}  # page-cache location -> tid -> the thread's last totals
        for p in defs.location_properties:
            if p.name == "EZIOTRACE::TID":
                tids[p.location.name] = int(p.value)
            elif p.name == "EZIOTRACE::RECLAIMED_PAGES":
                reclaimed[p.location.name] = int(p.value)
        for location, event in trace.events:
            if isinstance(event, otf2.events.IoOperationBegin) and location.name.startswith("block "):
                a = attrs(event)
                result["block"].append({
                    "device": location.name[len("block "):],
                    "pid": a["block.pid"], "tid": a["block.tid"], "call_id": a["call.id"],
                    "op": a["block.op"], "flags": a["block.flags"], "cause": a["block.cause"],
                    "bytes": event.bytes_request, "sector": a["block.sector"],
                })
            elif isinstance(event, otf2.events.Metric) and location.name.startswith("pagecache "):
                # One location per process; each event is one thread's sample (its totals as
                # attributes) and the process's totals of a few counters (the members).
                a = attrs(event)
                thread = {k[len("pagecache.thread."):]: int(v) for k, v in a.items()
                          if k.startswith("pagecache.thread.")}
                process = threads_of.setdefault(location.name, {})
                process[a["pagecache.tid"]] = thread
                for m, v in zip(event.metric.members, event.values):
                    if m.name != "pagecache.absorbed":
                        raise SystemExit(f"{location.name}: unexpected member {m.name}")
                    total = sum(t["hits"] + t["dirtied"] for t in process.values())
                    if int(v) != total:
                        raise SystemExit(f"{location.name}: {m.name} = {v}, its threads sum {total}")
                result["pagecache"][str(a["pagecache.tid"])] = dict(
                    {"pagecache." + k: v for k, v in thread.items()},
                    reclaimed=reclaimed.get(location.name, 0))
            elif (isinstance(event, otf2.events.IoOperationBegin)
                  and event.mode == otf2.IoOperationMode.WRITE and event.handle.file is not None):
                name = event.handle.file.name
                result["writes"][name] = result["writes"].get(name, 0) + 1
            elif isinstance(event, otf2.events.Enter):
                a = attrs(event)
                if "call.id" in a:
                    result["calls"][str(a["call.id"])] = {
                        "tid": tids.get(location.name, 0), "region": event.region.name}
    json.dump(result, sys.stdout, indent=1)


if __name__ == "__main__":
    main(sys.argv[1])
