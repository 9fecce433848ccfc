#!/usr/bin/env python3
"""Decodes a Perfetto protobuf trace for the tests, independently of truewatt.

protoc --decode against trace_subset.proto (Perfetto's published field
numbers) turns the file into text; this script then applies the format's
rules as Perfetto documents them: packet sequences, SEQ_INCREMENTAL_STATE_CLEARED,
interned event and argument names, trace packet defaults (default clock and
track), incremental sequence-scoped clocks from a ClockSnapshot, and slices
from begin/end pairs per track (ends close the innermost open slice).

usage: decode.py TRACE  -> JSON on stdout:
  {"tracks": {path: {"counter": bool, "unit": str, "description": str}},
   "counters": {path: [[t_ns, value], ...]},
   "slices": [{"track": path, "name": str, "ts": ns, "dur": ns, "args": {...}}],
   "interned_names": [...], "packets": n}
A track's path is its ancestors' names and its own, joined by " / ".
Exits 1 with a message on anything it cannot account for (an unknown field,
an iid never interned, a clock going back, an end without a begin).
"""
import codecs
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def die(msg):
    print("decode.py: " + msg, file=sys.stderr)
    sys.exit(1)


def protoc_text(path):
    with open(path, "rb") as f:
        r = subprocess.run(
            ["protoc", "-I", HERE, "--decode=perfetto.protos.Trace", "trace_subset.proto"],
            stdin=f, capture_output=True)
    if r.returncode != 0:
        die("protoc --decode failed: " + r.stderr.decode(errors="replace"))
    return r.stdout.decode()


def parse_value(text):
    if text.startswith('"'):
        return codecs.escape_decode(text[1:-1].encode())[0].decode("utf-8")
    if text in ("true", "false"):
        return text == "true"
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text  # an enum's name


def parse_text(text):
    """protoc's text format as nested dicts of lists: {field: [value or dict, ...]}."""
    root = {}
    stack = [root]
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        if line == "}":
            stack.pop()
            continue
        if line.endswith("{"):
            key = line[:-1].strip()
            child = {}
            stack[-1].setdefault(key, []).append(child)
            stack.append(child)
            continue
        key, _, value = line.partition(": ")
        stack[-1].setdefault(key, []).append(parse_value(value))
    for node in iter_dicts(root):
        for key in node:
            if key[0].isdigit():
                die("unknown field %s (a wrong field number or wire type)" % key)
    return root


def iter_dicts(node):
    yield node
    for values in node.values():
        for v in values:
            if isinstance(v, dict):
                yield from iter_dicts(v)


def one(msg, key, default=None):
    v = msg.get(key)
    return v[-1] if v else default


class Sequence:
    def __init__(self):
        self.valid = False
        self.clock = None      # default timestamp_clock_id
        self.track = 0         # default track_uuid
        self.incremental = {}  # clock id -> last value
        self.names = {}
        self.arg_names = {}


def decode(path):
    trace = parse_text(protoc_text(path))
    packets = trace.get("packet", [])
    tracks, seqs, interned = {}, {}, []
    events = []  # (track, type, ts, name, args)
    for p in packets:
        if "track_descriptor" in p:
            d = p["track_descriptor"][0]
            tracks[one(d, "uuid")] = {"name": one(d, "name", ""), "parent": one(d, "parent_uuid", 0),
                                      "counter": "counter" in d,
                                      "unit": one(d["counter"][0], "unit_name", "") if "counter" in d else "",
                                      "description": one(d, "description", "")}
        sid = one(p, "trusted_packet_sequence_id", 0)
        s = seqs.setdefault(sid, Sequence())
        flags = one(p, "sequence_flags", 0)
        if flags & 1:
            seqs[sid] = s = Sequence()
            s.valid = True
        if (flags & 2) and not s.valid:
            die("sequence %d needs incremental state before it was cleared" % sid)
        if "trace_packet_defaults" in p:
            d = p["trace_packet_defaults"][0]
            s.clock = one(d, "timestamp_clock_id")
            if "track_event_defaults" in d:
                s.track = one(d["track_event_defaults"][0], "track_uuid", 0)
        if "interned_data" in p:
            i = p["interned_data"][0]
            for n in i.get("event_names", []):
                s.names[one(n, "iid")] = one(n, "name")
                interned.append(one(n, "name"))
            for n in i.get("debug_annotation_names", []):
                s.arg_names[one(n, "iid")] = one(n, "name")
        if "clock_snapshot" in p:
            for c in p["clock_snapshot"][0].get("clocks", []):
                cid = one(c, "clock_id")
                if one(c, "is_incremental", False):
                    if not 64 <= cid < 128:
                        die("incremental clock %d is not sequence-scoped" % cid)
                    s.incremental[cid] = one(c, "timestamp", 0)
                elif cid != 6 or one(c, "timestamp", 0) != 0:
                    die("the snapshot ties the clocks to something other than BOOTTIME 0")
            continue
        if "track_event" not in p:
            continue
        clock = one(p, "timestamp_clock_id", s.clock)
        ts = one(p, "timestamp")
        if ts is None:
            die("a track event without a timestamp")
        if clock in s.incremental:
            ts = s.incremental[clock] = s.incremental[clock] + ts
        elif clock is not None and clock != 6:
            die("clock %s was never defined on sequence %d" % (clock, sid))
        e = p["track_event"][0]
        name = one(e, "name")
        if "name_iid" in e:
            if one(e, "name_iid") not in s.names:
                die("name iid %d was never interned on sequence %d" % (one(e, "name_iid"), sid))
            name = s.names[one(e, "name_iid")]
        args = {}
        for a in e.get("debug_annotations", []):
            an = s.arg_names.get(one(a, "name_iid")) if "name_iid" in a else one(a, "name")
            if an is None:
                die("argument name iid %s never interned" % one(a, "name_iid"))
            args[an] = next(one(a, k) for k in ("double_value", "int_value", "uint_value", "string_value",
                                                "bool_value") if k in a)
        value = one(e, "double_counter_value", one(e, "counter_value"))
        events.append((one(e, "track_uuid", s.track), one(e, "type"), ts, name, args, value))
    return tracks, events, interned, len(packets)


def path_of(tracks, uuid):
    names = []
    while uuid:
        if uuid not in tracks:
            die("track %d has no descriptor" % uuid)
        names.append(tracks[uuid]["name"])
        uuid = tracks[uuid]["parent"]
    return " / ".join(reversed(names))


def main():
    tracks, events, interned, npackets = decode(sys.argv[1])
    out = {"tracks": {}, "counters": {}, "slices": [], "interned_names": interned, "packets": npackets}
    for uuid, t in tracks.items():
        out["tracks"][path_of(tracks, uuid)] = {"counter": t["counter"], "unit": t["unit"],
                                                "description": t["description"]}
    # slices close in time order, per track
    events.sort(key=lambda e: e[2])  # stable: a sequence's order is kept at one time
    open_slices = {}
    for track, typ, ts, name, args, value in events:
        path = path_of(tracks, track)
        if typ == "TYPE_COUNTER":
            if not tracks[track]["counter"]:
                die("a counter value on the slice track " + path)
            out["counters"].setdefault(path, []).append([ts, value])
        elif typ == "TYPE_SLICE_BEGIN":
            open_slices.setdefault(track, []).append({"track": path, "name": name, "ts": ts, "args": args})
        elif typ == "TYPE_SLICE_END":
            if not open_slices.get(track):
                die("an end without a begin on " + path)
            s = open_slices[track].pop()
            s["dur"] = ts - s["ts"]
            out["slices"].append(s)
        else:
            die("unexpected event type %s" % typ)
    if any(open_slices.values()):
        die("slices never ended")
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
