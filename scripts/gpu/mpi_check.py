#!/usr/bin/env python3
"""The checks of scripts/gpu-mpi on a merged report of an MPI job (truewatt report --json RUN...).

For each GPU of the report: its energy over its fit span (energy_j, the model) against the
energy its NVML counter counted over the same span, read independently by energy_log.py
(within --tolerance, default 1 %); and each rank's kernels on its own GPU (--gpus: the UUID
each rank was given, one "rank,uuid" line each). Prints PASS/FAIL lines; exit status 1 on a FAIL.

The counter's energy over a span: scripts/gpu/counter_ref.py.

  python3 scripts/gpu/mpi_check.py --merged merged.json --energy energy.csv --gpus ranks.csv
"""
import argparse
import csv
import json
import sys

from counter_ref import at, counter_points, read_log


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--merged", required=True)
    ap.add_argument("--energy", required=True)
    ap.add_argument("--gpus", required=True, help='CSV "rank,uuid": the GPU each rank was given')
    ap.add_argument("--tolerance", type=float, default=0.01)
    ap.add_argument("--activity-counters", action="store_true",
                    help="the ranks ran with --activity-counters: every GPU must have them recorded (else only "
                         "those recorded are checked: truewatt run's default windows need the program's context)")
    args = ap.parse_args()
    d = json.load(open(args.merged))
    log = read_log(args.energy, lambda r: r["uuid"].lower())
    given = {int(r): u.strip().lower() for r, u in csv.reader(open(args.gpus))}
    ok = True

    def verdict(good, text):
        nonlocal ok
        ok &= good
        print(f"{'PASS' if good else 'FAIL'} {text}")

    for g in d["gpus"]:
        uuid = g["uuid"].lower()
        if g.get("error") or g.get("energy_j") is None:
            verdict(False, f"{uuid}: no energy in the merged report: {g.get('error')}")
            continue
        t0 = g["t0_mono_ns"] * 1e-9
        a, b = t0 + g["fit_start_s"], t0 + g["fit_end_s"]
        pts = counter_points(log.get(uuid, []))
        try:
            ref = at(pts, b) - at(pts, a)
        except (ValueError, IndexError) as e:
            verdict(False, f"{uuid}: no independent counter over the fit span: {e}")
            continue
        err = g["energy_j"] / ref - 1
        verdict(abs(err) <= args.tolerance,
                f"{uuid} ({', '.join(g['ranks']) or 'no rank'}): merged {g['energy_j']:.2f} J vs its NVML counter "
                f"(pynvml) {ref:.2f} J over {b - a:.3f} s: {100 * err:+.2f} % (tolerance {100 * args.tolerance:g} %; "
                f"truewatt's own counter reading {g['counter_j']:.2f} J)")
    for g in d["gpus"]:  # where the ranks recorded activity counters: recorded, and given to the estimate
        a, m = g.get("activity_counters"), g.get("activity_model")
        if a is None or not (args.activity_counters or a.get("recorded")):
            continue
        verdict(bool(a.get("recorded")) and a.get("samples", 0) > 0 and m is not None and (m["used"] or m["why_not"]),
                f"{g['uuid'].lower()}: activity counters {a.get('line', '')[:60]}...; in its estimate: "
                f"{'used for ' + str(m.get('names')) + ' names' if m and m['used'] else (m or {}).get('why_not')}")
    for rank, uuid in sorted(given.items()):
        on = [g["uuid"].lower() for g in d["gpus"] for n in g["names"] if n["rank"] == rank and n["kind"] == "kernel"]
        launches = sum(n["launches"] for g in d["gpus"] for n in g["names"] if n["rank"] == rank and n["kind"] == "kernel")
        verdict(bool(on) and set(on) == {uuid},
                f"rank {rank}: {launches} kernel launches, on {sorted(set(on)) or 'no GPU'}; its GPU is {uuid}")
    t = d["total"]
    s = sum(g["energy_j"] for g in d["gpus"] if g.get("energy_j") is not None)
    verdict(abs(t["energy_j"] - s) <= 1e-6 * max(1.0, s),
            f"total {t['energy_j']:.2f} J = the sum over the {t['gpus']} GPUs, each once ({s:.2f} J)")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
