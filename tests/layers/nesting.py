"""Reads an eziotrace archive with python3-otf2 (an independent reader) and prints, one per line
and tab-separated, what the layer tests assert on: `pair<TAB>parent>region<TAB>count`,
`vfs<TAB>region|path|fstype<TAB>count`, `probe<TAB>layer<TAB>hook` and `error<TAB>text` for every
nesting or time-order error found on a location."""
import collections
import sys

import otf2


def main(path):
    pairs = collections.Counter()
    vfs = collections.Counter()  # (region, path, fstype)
    errors = []
    stacks = collections.defaultdict(list)
    last = {}
    probes = {}
    with otf2.reader.open(path) as trace:
        for node_prop in trace.definitions.system_tree_node_properties:
            if node_prop.name.startswith("EZIOTRACE::PROBE::"):
                probes[node_prop.name.split("::")[-1]] = node_prop.value
        for loc, ev in trace.events:
            if loc in last and ev.time < last[loc]:
                errors.append(f"{loc.name}: time goes back at {ev.time}")
            last[loc] = ev.time
            stack = stacks[loc]
            if isinstance(ev, otf2.events.Enter):
                name = ev.region.canonical_name
                parent = stack[-1] if stack else "-"
                pairs[f"{parent}>{name}"] += 1
                if name.startswith("vfs:"):
                    attrs = {a.name: v for a, v in (ev.attributes or {}).items()}
                    vfs[f"{name}|{attrs.get('vfs.path', '')}|{attrs.get('vfs.fstype', '')}"] += 1
                stack.append(name)
            elif isinstance(ev, otf2.events.Leave):
                name = ev.region.canonical_name
                if not stack or stack[-1] != name:
                    errors.append(f"{loc.name}: LEAVE {name} does not match {stack[-1:] or 'nothing'}")
                else:
                    stack.pop()
    for loc, stack in stacks.items():
        if stack:
            errors.append(f"{loc.name}: regions left open: {stack}")
    for k, n in sorted(pairs.items()):
        print(f"pair\t{k}\t{n}")
    for k, n in sorted(vfs.items()):
        print(f"vfs\t{k}\t{n}")
    for k, v in sorted(probes.items()):
        print(f"probe\t{k}\t{v}")
    for e in errors:
        print(f"error\t{e}")


if __name__ == "__main__":
    main(sys.argv[1])
