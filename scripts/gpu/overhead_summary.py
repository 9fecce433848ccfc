#!/usr/bin/env python3
"""Medians of the overhead runs of scripts/gpu-validate-run: the measured
program's wall time without truewatt and under `truewatt run` sampling, the
slowdown, and the sampler's CPU use. Input: overhead.csv from that script."""
import csv
import statistics
import sys


def main(path):
    rows = list(csv.DictReader(line for line in open(path) if not line.startswith("#")))
    programs = sorted({r["program"] for r in rows})
    print("program  mode            runs  median_wall_s  slowdown_%  sampler_cpu_%_of_one_core(median)")
    for prog in programs:
        base = None
        for mode in ("plain", "sampling", "sampling+cupti"):
            sel = [r for r in rows if r["program"] == prog and r["mode"] == mode and r["wall_s"]]
            if not sel:
                print(f"{prog:8s} {mode:15s} 0     (no valid runs)")
                continue
            wall = statistics.median(float(r["wall_s"]) for r in sel)
            cpu = [float(r["sampler_cpu_pct"]) for r in sel if r["sampler_cpu_pct"]]
            slow = "" if base is None else f"{100.0 * (wall / base - 1.0):+.2f}"
            cpu_s = f"{statistics.median(cpu):.2f}" if cpu else ""
            print(f"{prog:8s} {mode:15s} {len(sel):<5d} {wall:13.4f}  {slow:>10s}  {cpu_s}")
            if mode == "plain":
                base = wall


if __name__ == "__main__":
    main(sys.argv[1])
