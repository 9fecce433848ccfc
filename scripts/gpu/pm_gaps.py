#!/usr/bin/env python3
"""Where PM sampling's windows hold samples, from run files (issue 15; no GPU needed).

  python3 scripts/gpu/pm_gaps.py RUN.sqlite[.xz] ...

For each run file's first PM-sampled device: the interval, the samples, and per window (pm_windows)
its length, its samples, how long after the window's start the first one began and how long before
its end the last one ended, the share of the window the samples span, and each gap between
consecutive samples longer than GAP_INTERVALS intervals (its length and where it began, ms after the
window's start). On the H100, CUPTI gave the samples after a decode that filled the counter data
image no span (left out, so a gap in the run file): results/h100/pm-decode-s37.
"""
import lzma
import os
import shutil
import sqlite3
import sys
import tempfile

GAP_INTERVALS = 10


def open_run(path):
    """A connection to the run file (an .xz one decompressed into a temporary file) and that file."""
    if not path.endswith(".xz"):
        return sqlite3.connect(f"file:{path}?mode=ro", uri=True), None
    tmp = tempfile.NamedTemporaryFile(suffix=".sqlite", delete=False)
    with lzma.open(path) as src, tmp:
        shutil.copyfileobj(src, tmp)
    return sqlite3.connect(tmp.name), tmp.name


def report(path):
    db, tmp = open_run(path)
    try:
        dev = db.execute("SELECT device, interval_ns FROM pm_devices ORDER BY device").fetchone()
        if not dev:
            print(f"{path}: no PM sampling")
            return
        d, interval = dev
        rows = db.execute("SELECT start_ns, dur_ns FROM pm_samples WHERE device = ? ORDER BY start_ns", (d,)).fetchall()
        wins = db.execute("SELECT start_ns, end_ns FROM pm_windows WHERE device = ? ORDER BY start_ns", (d,)).fetchall()
        print(f"{os.path.basename(path)}: device {d}, every {interval / 1e6:g} ms, {len(rows)} samples, "
              f"{len(wins)} windows")
        if not wins and rows:  # throughout: one window from the first sample to the last
            wins = [(rows[0][0], rows[-1][0] + rows[-1][1])]
        total_on = total_spanned = 0
        for a, b in wins:
            inw = [r for r in rows if a <= r[0] and r[0] + r[1] <= b]
            spanned = sum(r[1] for r in inw)
            total_on += b - a
            total_spanned += spanned
            if not inw:
                print(f"  window {(b - a) / 1e9:.3f} s: no samples")
                continue
            gaps = []
            for p, r in zip(inw, inw[1:]):
                g = r[0] - p[0] - p[1]
                if g > GAP_INTERVALS * interval:
                    gaps.append(f"{g / 1e6:.0f}@{(p[0] + p[1] - a) / 1e6:.0f}")
            print(f"  window {(b - a) / 1e9:.3f} s: {len(inw)} samples spanning {100 * spanned / (b - a):.0f} %, "
                  f"first +{(inw[0][0] - a) / 1e6:.0f} ms, last {(b - inw[-1][0] - inw[-1][1]) / 1e6:.0f} ms "
                  f"before the end; gaps (ms@ms): {' '.join(gaps) or 'none'}")
        if total_on:
            print(f"  the windows' time spanned by samples: {100 * total_spanned / total_on:.1f} %")
    finally:
        db.close()
        if tmp:
            os.unlink(tmp)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__.strip().splitlines()[2].strip())
    for path in sys.argv[1:]:
        if not os.path.exists(path):
            sys.exit(f"pm_gaps.py: {path}: no such file")
        report(path)


if __name__ == "__main__":
    main()
