#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Independent reference for the profile test: per region name, the number of ENTER events and
the summed inclusive time in ticks, computed with python3-otf2's low-level bindings (run with
/usr/bin/python3). The high-level otf2.reader refuses EZTrace archives (duplicate definition
ids), so definitions are read by hand here, last definition of an id winning."""
import json
import sys

import _otf2


def main(anchor):
    reader = _otf2.Reader_Open(anchor)
    _otf2.Reader_SetSerialCollectiveCallbacks(reader)
    strings, region_names, locations = {}, {}, []

    def on_string(_, ref, text):
        strings[ref] = text
        return _otf2.CALLBACK_SUCCESS

    def on_region(_, ref, name, *rest):
        region_names[ref] = name
        return _otf2.CALLBACK_SUCCESS

    def on_location(_, ref, *rest):
        locations.append(ref)
        return _otf2.CALLBACK_SUCCESS

    defs = _otf2.Reader_GetGlobalDefReader(reader)
    cbs = _otf2.GlobalDefReaderCallbacks_New()
    _otf2.GlobalDefReaderCallbacks_SetStringCallback(cbs, on_string)
    _otf2.GlobalDefReaderCallbacks_SetRegionCallback(cbs, on_region)
    _otf2.GlobalDefReaderCallbacks_SetLocationCallback(cbs, on_location)
    _otf2.Reader_RegisterGlobalDefCallbacks(reader, defs, cbs, None)
    _otf2.Reader_ReadAllGlobalDefinitions(reader, defs)
    _otf2.Reader_CloseGlobalDefReader(reader, defs)

    for loc in locations:
        _otf2.Reader_SelectLocation(reader, loc)
    _otf2.Reader_OpenEvtFiles(reader)
    for loc in locations:
        _otf2.Reader_GetEvtReader(reader, loc)

    counts, inclusive, stacks = {}, {}, {}

    def on_enter(location, time, _, attributes, region):
        name = strings.get(region_names.get(region), "<region %d>" % region)
        counts[name] = counts.get(name, 0) + 1
        stacks.setdefault(location, []).append((name, time))
        return _otf2.CALLBACK_SUCCESS

    def on_leave(location, time, _, attributes, region):
        stack = stacks.get(location)
        if stack:
            name, start = stack.pop()
            inclusive[name] = inclusive.get(name, 0) + (time - start)
        return _otf2.CALLBACK_SUCCESS

    events = _otf2.Reader_GetGlobalEvtReader(reader)
    ecbs = _otf2.GlobalEvtReaderCallbacks_New()
    _otf2.GlobalEvtReaderCallbacks_SetEnterCallback(ecbs, on_enter)
    _otf2.GlobalEvtReaderCallbacks_SetLeaveCallback(ecbs, on_leave)
    _otf2.Reader_RegisterGlobalEvtCallbacks(reader, events, ecbs, None)
    _otf2.Reader_ReadAllGlobalEvents(reader, events)
    _otf2.Reader_CloseGlobalEvtReader(reader, events)
    _otf2.Reader_CloseEvtFiles(reader)
    _otf2.Reader_Close(reader)
    json.dump({name: {"count": counts[name], "inclusive_ticks": inclusive.get(name, 0)}
               for name in counts}, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
