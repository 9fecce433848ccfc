#!/usr/bin/env python3
"""The injection's overhead on scripts/gpu-scale's training steps, from its step files: the median
step time (ms) of the same first steps under `truewatt run` (steps.truewatt.txt) and without it
(steps.plain.txt), one time a line ('#' lines skipped).
  scale_overhead.py DIR  -> prints the comparison (scripts/gpu-scale writes it as DIR/overhead.txt)"""
import os
import statistics
import sys


def steps(path):
    with open(path) as f:
        return [float(x) for x in f if x.strip() and not x.startswith("#")]


def overhead(d):
    """(steps compared, median ms under truewatt, median ms without, all steps under truewatt) or None."""
    t, p = steps(os.path.join(d, "steps.truewatt.txt")), steps(os.path.join(d, "steps.plain.txt"))
    n = min(len(t), len(p))
    if not n:
        return None
    return n, statistics.median(t[:n]), statistics.median(p[:n]), t


def main(d):
    o = overhead(d)
    if o is None:
        sys.exit(f"scale_overhead: {d}: no step times")
    n, a, b, t = o
    print(f"# command: scripts/gpu/scale_overhead.py {d}")
    print(f"steps compared: {n}; median step under truewatt run: {a:.4f} ms; without: {b:.4f} ms; "
          f"overhead {100 * (a / b - 1):+.1f} %")
    print(f"median over all {len(t)} steps under truewatt run: {statistics.median(t):.4f} ms")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
