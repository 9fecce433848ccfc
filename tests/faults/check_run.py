#!/usr/bin/env python3
"""What scripts/faults checks in a run file after a fault (standard library only).

usage: check_run.py RUN REPORT_JSON [CHECK...]
  RUN          the run file; REPORT_JSON: what `truewatt report RUN --json` printed
  CHECK        ticks>=N        at least N `tick` kernels of tests/faults/fault_app.py recorded
               activities>=N   at least N kernels, copies or memsets recorded
               last_poll<=S    no sample after S s on the timeline (the GPU lost at S)
               last_poll>=S    samples up to at least S s
               buffer_complete the sample buffer's samples (20 ms apart in the fake) without a gap
                               from the first (within 0.5 s of the first poll) to the last: none
                               lost to NVML errors
               readings=a,b    these readings were sampled
               unfinished      the report says truewatt did not finish the run
               energy=NAME:P:D the kernel NAME's energy within 1 % of (P - 120 W) x D s: the fake's
                               scenario, its idle 120 W (with the fake's profile)
Always: SQLite's integrity check is ok, and the report has one device. Prints one line per
check; exits 1 when one fails.
"""
import json
import sqlite3
import sys


def main():
    run, report = sys.argv[1], sys.argv[2]
    db = sqlite3.connect(f"file:{run}?mode=ro", uri=True)
    d = json.load(open(report))
    failed = []

    def check(ok, what):
        print(("  ok: " if ok else "  FAIL: ") + what)
        if not ok:
            failed.append(what)

    check(db.execute("PRAGMA integrity_check").fetchone()[0] == "ok", "the run file passes SQLite's integrity check")
    check(len(d.get("devices", [])) == 1, "the report has the device")
    last = (db.execute("SELECT max(t_ns) FROM polls").fetchone()[0] or 0) * 1e-9
    for c in sys.argv[3:]:
        if c.startswith("ticks>="):
            n = db.execute("SELECT count(*) FROM activities_named WHERE name = 'tick'").fetchone()[0]
            check(n >= int(c[7:]), f"{n} tick kernels recorded (at least {c[7:]})")
        elif c.startswith("activities>="):
            n = db.execute("SELECT count(*) FROM activities").fetchone()[0]
            check(n >= int(c[12:]), f"{n} kernels, copies and memsets recorded (at least {c[12:]})")
        elif c.startswith("last_poll<="):
            check(last <= float(c[11:]), f"the last sample at {last:.3f} s (at most {c[11:]} s)")
        elif c.startswith("last_poll>="):
            check(last >= float(c[11:]), f"the last sample at {last:.3f} s (at least {c[11:]} s)")
        elif c == "buffer_complete":
            rows = db.execute("SELECT DISTINCT s.value_t_ns FROM samples s JOIN readings r ON r.id = s.reading "
                              "WHERE r.name = 'power_buffer_w' AND s.value IS NOT NULL AND s.value_t_ns IS NOT NULL ORDER BY 1").fetchall()
            t = [r[0] * 1e-9 for r in rows]
            want = round((t[-1] - t[0]) / 0.02) + 1 if t else -1
            first = (db.execute("SELECT min(t_ns) FROM polls").fetchone()[0] or 0) * 1e-9
            check(len(t) == want and len(t) > 10 and t[0] <= first + 0.5,
                  f"sample buffer: {len(t)} samples from {t[0] if t else 0:.2f} to {t[-1] if t else 0:.2f} s, "
                  f"{want} every 20 ms, the first within 0.5 s of the first poll ({first:.2f} s)")
        elif c.startswith("readings="):
            have = {n for (n,) in db.execute("SELECT name FROM readings")}
            want = set(c[9:].split(","))
            check(want <= have, f"readings sampled: {sorted(want & have)} of {sorted(want)}")
        elif c == "unfinished":
            check(any("did not finish this run" in w for w in d["warnings"]), "the report says the run did not finish")
        elif c.startswith("energy="):
            name, p, dur = c[7:].split(":")
            want = (float(p) - 120) * float(dur)
            k = {x["name"]: x for x in d["devices"][0]["names"]}
            got = k.get(name, {}).get("energy_j", float("nan"))
            err = 100 * (got / want - 1)
            check(abs(err) < 1, f"{name}: {got:.3f} J, the scenario's {want:.3f} J ({err:+.3f} %, within 1 %)")
        else:
            sys.exit(f"check_run.py: unknown check {c}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
