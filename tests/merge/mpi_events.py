#!/usr/bin/python3
"""Lists the MPI events of an OTF2 archive with python3-otf2, a reader independent of ours, with
what their communicator says: its name, its members (location ids, in rank order) and the peer
location of point-to-point events. Output (JSON): {"warnings": [...], "events": [{"loc", "k",
"comm", "members", "peer"}]}.  Usage: mpi_events.py ARCHIVE.otf2
"""
import json
import sys
import warnings

import otf2


def main(path):
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
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
