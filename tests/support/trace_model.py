# SPDX-License-Identifier: GPL-2.0-only
"""Reads a kernel archive of trace model 2 as model 1 (docs/trace-model.md, "Trace model 2"), with
python3-otf2, independently of common/otf2/model_upgrade.cpp: each event comes with its
attributes by name as model 1 has them. Model 2 leaves out a read, write or flush's
syscall.bytes, syscall.result and call.id (its IoOperationBegin's request and matching id, its
IoOperationComplete's bytes), a derived VFS event's vfs.result and vfs.derived (a region of its
own: the syscall's result) and a VFS event's vfs.dev, vfs.fstype, vfs.path and vfs.mount (one
vfs.file, an IoRegularFile named after the path with the others as IoFileProperties)."""
import otf2

DERIVED_DESCRIPTION = "eziotrace vfs layer, derived"
VFS_FILE_PROPERTY = "vfs.dev"  # every file of model 2's vfs.file has it


def value(v):
    return v if isinstance(v, (int, float, str)) or v is None else str(v)


def regular_files(d):
    """The names of the regular files, but those that only name a VFS event's file (model 2's
    vfs.file), not one the application opened."""
    vfs_files = {p.io_file._ref for p in d.io_file_properties if p.name == VFS_FILE_PROPERTY}
    return sorted(f.name for f in d.io_regular_files if f._ref not in vfs_files)


def _files(d):
    files = {}
    for p in d.io_file_properties:
        files.setdefault(p.io_file._ref, {"path": p.io_file.name})[p.name] = value(p.value)
    return files


def _model(d):
    for p in d.system_tree_node_properties:
        if p.name == "EZIOTRACE::TRACE_MODEL":
            return int(value(p.value))
    return 1


def attrs_of(ev):
    return {a.name: value(v) for a, v in (ev.attributes or {}).items()}


class _Upgrade:
    def __init__(self, d):
        self.files = _files(d)
        self.pending = {}  # location -> [[ev, attrs], ...], depth

    def vfs(self, ev, a, result):
        if "vfs.file" not in a:
            return a
        f = self.file_of(ev)
        out = {}
        if "vfs.inode" in a:
            out["vfs.inode"] = a["vfs.inode"]
        for k in ("vfs.dev", "vfs.fstype"):
            if k in f:
                out[k] = f[k]
        if "vfs.mount" in f:
            out["vfs.path"] = f["path"]
            out["vfs.mount"] = f["vfs.mount"]
        if "vfs.offset" in a:
            out["vfs.offset"] = a["vfs.offset"]
        derived = ev.region.description == DERIVED_DESCRIPTION
        if "vfs.result" in a:
            out["vfs.result"] = a["vfs.result"]
        elif result is not None:
            out["vfs.result"] = result
        out["vfs.derived"] = 1 if derived else 0
        return out

    def file_of(self, ev):
        for k, v in ev.attributes.items():
            if k.name == "vfs.file":
                return self.files.get(v._ref, {})
        return {}

    def call(self, held):
        enter = held[0][1]
        begin = next((ev for ev, _ in held[1:] if type(ev).__name__ == "IoOperationBegin"), None)
        end = next((ev for ev, _ in held[1:] if type(ev).__name__ in
                    ("IoOperationComplete", "IoOperationCancelled")), None)
        if begin is not None and "call.id" not in enter:
            out = {}
            if "syscall.fd" in enter:
                out["syscall.fd"] = enter["syscall.fd"]
            if "syscall.bytes" in enter:
                out["syscall.bytes"] = enter["syscall.bytes"]
            elif begin.mode in (otf2.IoOperationMode.READ, otf2.IoOperationMode.WRITE):
                out["syscall.bytes"] = begin.bytes_request
            if "syscall.offset" in enter:
                out["syscall.offset"] = enter["syscall.offset"]
            if "syscall.result" in enter:
                out["syscall.result"] = enter["syscall.result"]
            elif end is not None and type(end).__name__ == "IoOperationComplete":
                out["syscall.result"] = end.bytes_result
            out["call.id"] = begin.matching_id
            held[0][1] = enter = out
        result = enter.get("syscall.result")
        for item in held[1:]:
            ev = item[0]
            if type(ev).__name__ == "Enter" and ev.region.canonical_name.startswith("vfs:"):
                item[1] = self.vfs(ev, item[1], result)
        return held

    def feed(self, loc, ev):
        """The events ready to hand on, each as (ev, attributes)."""
        kind = type(ev).__name__
        a = attrs_of(ev)
        held = self.pending.get(loc)
        if held is None:
            region = getattr(ev, "region", None)
            if kind == "Enter" and region.canonical_name.startswith("syscall:"):
                self.pending[loc] = ([[ev, a]], 1)
                return []
            if kind == "Enter" and region.canonical_name.startswith("vfs:"):
                a = self.vfs(ev, a, None)
            return [(ev, a)]
        events, depth = held
        events.append([ev, a])
        depth += 1 if kind == "Enter" else -1 if kind == "Leave" else 0
        if depth > 0:
            self.pending[loc] = (events, depth)
            return []
        del self.pending[loc]
        return [tuple(x) for x in self.call(events)]

    def rest(self):
        for loc, (events, _) in list(self.pending.items()):
            for ev, a in self.call(events):
                yield loc, ev, a
        self.pending = {}


def events(r):
    """(location, event, its attributes by name as model 1 has them) for every event of the
    reader r, each location's in order."""
    d = r.definitions
    if _model(d) < 2:
        for loc, ev in r.events:
            yield loc, ev, attrs_of(ev)
        return
    up = _Upgrade(d)
    for loc, ev in r.events:
        for e, a in up.feed(loc, ev):
            yield loc, e, a
    yield from up.rest()
