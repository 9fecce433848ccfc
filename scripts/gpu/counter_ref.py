"""The GPU's energy between two instants from energy_log.py's CSV (its NVML counter, polled), for the
checks that compare truewatt with it (scripts/gpu/mpi_check.py, scripts/exporter/procs_check.py).

The counter's value changes at its own update instants (every 100 ms on an H100 and on the fake
libnvidia-ml), seen at the next poll: each change is placed in the middle of the two polls around
it, and the counter is interpolated linearly between changes, so that the span's ends fall between
updates without a bias. Interpolating between the polls instead leaves the value of the last update
until the next change is seen: a span whose ends fall at different phases of the updates, or a poll
delayed by a loaded machine, moves the energy by up to an update's worth (40 J at 400 W).
Standard library only.
"""
import csv
from bisect import bisect_right


def counter_points(rows):
    """(t_s, joules) at each change of the counter: mid-way between the polls around it."""
    pts, prev = [], None
    for t, e in rows:
        if prev is None:
            pts.append((t, e))
        elif e != prev[1]:
            pts.append((0.5 * (prev[0] + t), e))
        prev = (t, e)
    return pts


def at(pts, t):
    """The counter (J) at t_s, linear between its changes."""
    ts = [p[0] for p in pts]
    k = bisect_right(ts, t)
    if k == 0 or k == len(pts):
        raise ValueError(f"{t:.3f} s is outside the energy log ({ts[0]:.3f} .. {ts[-1]:.3f} s)")
    (t0, e0), (t1, e1) = pts[k - 1], pts[k]
    return e0 + (e1 - e0) * (t - t0) / (t1 - t0)


def read_log(path, key):
    """energy_log.py's rows by key(row) (a GPU's index or UUID): {key: [(t_s, joules), ...]}."""
    log = {}
    for r in csv.DictReader(open(path)):
        log.setdefault(key(r), []).append((int(r["t_mono_ns"]) * 1e-9, int(r["energy_mj"]) * 1e-3))
    return log
