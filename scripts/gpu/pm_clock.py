#!/usr/bin/env python3
"""The GPU's clock while each kernel name ran, from the activity counters' samples (issue 15; no GPU).

  python3 scripts/gpu/pm_clock.py RUN.sqlite[.xz] [NAME ...]
  python3 scripts/gpu/pm_clock.py --csv PM_SAMPLES.csv[.gz] EVENTS.csv[.gz] [NAME ...]

A PM sample's gpc__cycles_elapsed.max over its span is the GPC clock it ran at (NVML's clock reading
is the target, and said 1,980 MHz throughout on an H100 whose samples gave 1,589 to 2,090 MHz). For
each kernel name (the NAMEs given, else the ten with the most samples): the samples that lie wholly
inside its launches, their mean clock (MHz) and mean tensor-pipe activity (%); then the idle samples'
(no SM active) median clock, the GPU's unloaded clock. Samples longer than 1 ms (a stall of the
sampling) are left out. From a run file (`truewatt run -o`) or from `truewatt export`'s
pm_samples.csv and events.csv. First PM-sampled device only.
"""
import bisect
import os
import statistics
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pm_features import clock_mhz  # noqa: E402  (one definition of a sample's clock)
from pm_gaps import open_run  # noqa: E402  (one way to open a run file)
from textfile import csv_rows  # noqa: E402  (one way to read a kept CSV)

CLOCK = "gpc__cycles_elapsed.max"
SM = "sm__cycles_active.avg"
TENSOR = "sm__pipe_tensor"  # a prefix: the metric's full name carries its unit
MAX_SPAN_S = 1e-3


def from_run(path):
    """(samples, launches): samples as (t0_s, t1_s, {metric: value}), launches as (name, t0_s, t1_s)."""
    db, tmp = open_run(path)
    try:
        row = db.execute("SELECT device, metrics FROM pm_devices ORDER BY device").fetchone()
        if not row:
            sys.exit(f"{path}: no PM sampling")
        dev, metrics = row[0], row[1].split(",")
        fmt = "%df" % len(metrics)
        samples = [(s * 1e-9, (s + d) * 1e-9, dict(zip(metrics, struct.unpack(fmt, v))))
                   for s, d, v in db.execute("SELECT start_ns, dur_ns, v FROM pm_samples WHERE device = ? "
                                             "ORDER BY start_ns", (dev,))]
        launches = [(n, a * 1e-9, b * 1e-9) for n, a, b in db.execute(
            "SELECT name, start_ns, end_ns FROM activities_named WHERE kind = 'kernel' AND device = ?", (dev,))]
        return samples, launches
    finally:
        db.close()
        if tmp:
            os.unlink(tmp)


def from_csv(pm_path, events_path):
    """The same from truewatt export's CSVs (pm_samples: one row per sample and metric)."""
    by = {}
    dev = None
    for r in csv_rows(pm_path, "pm_clock"):
        dev = r["device"] if dev is None else dev
        if r["device"] != dev:
            continue
        by.setdefault((float(r["start_s"]), float(r["end_s"])), {})[r["metric"]] = float(r["value"])
    samples = sorted((a, b, m) for (a, b), m in by.items())
    launches = [(r["name"], float(r["start_s"]), float(r["end_s"])) for r in csv_rows(events_path, "pm_clock")
                if r.get("kind") == "kernel" and r.get("device", dev) == dev]
    return samples, launches


def metric(m, name, prefix=False):
    if prefix:
        return next((v for k, v in m.items() if k.startswith(name)), None)
    return m.get(name)


def sample_clock(t0, t1, m):
    return clock_mhz(list(m), list(m.values()), t1 - t0)


def main(argv):
    if len(argv) >= 3 and argv[0] == "--csv":
        samples, launches = from_csv(argv[1], argv[2])
        names = argv[3:]
        what = f"{argv[1]}, {argv[2]}"
    elif argv and not argv[0].startswith("-"):
        samples, launches = from_run(argv[0])
        names = argv[1:]
        what = argv[0]
    else:
        sys.exit(__doc__)
    samples = [s for s in samples if 0 < s[1] - s[0] <= MAX_SPAN_S and metric(s[2], CLOCK)]
    if not samples:
        sys.exit(f"{what}: no PM sample with {CLOCK}")
    starts = [s[0] for s in samples]
    inside = {}
    for n, a, b in launches:
        i = bisect.bisect_left(starts, a)
        while i < len(samples) and samples[i][1] <= b:
            inside.setdefault(n, []).append(samples[i])
            i += 1
    if not names:
        names = sorted(inside, key=lambda n: -len(inside[n]))[:10]
    print(f"# {what}: {len(samples)} samples; the GPC clock = {CLOCK} / the sample's span")
    print("%-60s %8s %10s %9s" % ("name", "samples", "clock_mhz", "tensor_%"))
    for n in names:
        s = inside.get(n, [])
        clock = [sample_clock(a, b, m) for a, b, m in s]
        tensor = [metric(m, TENSOR, True) for _, _, m in s if metric(m, TENSOR, True) is not None]
        print("%-60s %8d %10s %9s" % (n[:60], len(s), "%.0f" % statistics.mean(clock) if clock else "-",
                                      "%.1f" % statistics.mean(tensor) if tensor else "-"))
    idle = [sample_clock(a, b, m) for a, b, m in samples if not metric(m, SM)]
    print("%-60s %8d %10s" % ("(idle: no SM active; median)", len(idle), "%.0f" % statistics.median(idle) if idle else "-"))


if __name__ == "__main__":
    main(sys.argv[1:])
