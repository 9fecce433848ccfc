#!/usr/bin/env python3
"""Does a per-GPU power model on the activity counters tell the PyTorch step's kernels apart?
(scripts/gpu-activity-calib; docs/methods.md, "Activity counters: a calibrated model")

  activity_calib.py RAW OUT

RAW holds, per run STEM, STEM.sqlite (truewatt run -o, kept), STEM.stderr.txt (the program's
`mix.window` / `mix.kernel` lines), STEM.trace.csv and STEM.events.csv (truewatt export). Stems:
  steady.NAME     apps/mix's NAME back to back, with the activity counters (1 ms)
  torch.steady    the PyTorch step's operators, each back to back, with the activity counters
  torch.ref       the same without them (the operators' references as scripts/gpu-attrib takes them)
  torch.fine.*    the training step with the counters in windows at a fine interval

Three steps, each printed and written to OUT:
 1. calib.csv: per steady stretch (a mix kernel, a PyTorch operator) its power above the quiet level
    while kernels run (the energy counter, attrib_table.window_energy: never truewatt's estimate) and
    its features' levels (src/estimate/counters.c's definitions: sm, tensor, issue, dram, l2; a
    sample's value over the share of it kernels cover).
 2. model.txt: P = sum_m c_m * level_m, c >= 0, by least squares: on the mix kernels only, on every
    row, and for each PyTorch operator on every row but its own (leave one out: a test on kernels the
    fit never saw).
 3. step.csv: each name of the training step, its levels from the fine samples (each sample's
    level shared among the names in it by their time in it) and from the same samples pooled to
    1 ms (what 1 ms sampling gives), and the model's power for both; the names of the operators
    against their steady references.
"""
import bisect
import csv
import math
import os
import sqlite3
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attrib_table as at  # noqa: E402  (the counter references: one implementation)
from pm_features import FEATURES, clip01, clock_mhz, feature_row  # noqa: E402  (counters.c's features)

import numpy as np  # noqa: E402

EDGE_S = 0.3  # a steady stretch's first and last EDGE_S are left out of its levels (ramp, tail)


def die(msg):
    sys.exit("activity_calib: " + msg)


def read_samples(path, device=0):
    """(metric names, [(t0_s, t1_s, features)], info) of a run file's PM samples on the run's timeline;
    info["clock_mhz"]: each sample's GPC clock (pm_features.clock_mhz), in the samples' order."""
    db = sqlite3.connect(path)
    row = db.execute("SELECT metrics, interval_ns, busy_s, overflows FROM pm_devices WHERE device = ?",
                     (device,)).fetchone()
    if not row or not row[0]:
        die(f"{path}: no PM sampling on device {device}")
    names = row[0].split(",")
    out, clocks = [], []
    for s, d, v in db.execute("SELECT start_ns, dur_ns, v FROM pm_samples WHERE device = ? ORDER BY start_ns",
                              (device,)):
        if row[1] and d > 4 * row[1]:  # a stall, or the first sample after a window's gap: counters.c's rule
            continue
        vals = struct.unpack("<%df" % len(names), v)
        out.append((s * 1e-9, (s + d) * 1e-9, feature_row(names, vals)))
        clocks.append(clock_mhz(names, vals, d * 1e-9))
    info = {"metrics": names, "interval_ns": row[1], "busy_s": row[2], "overflows": row[3], "clock_mhz": clocks}
    wins = db.execute("SELECT start_ns, end_ns FROM pm_windows WHERE device = ? ORDER BY start_ns",
                      (device,)).fetchall() if has_table(db, "pm_windows") else []
    info["windows"] = [(a * 1e-9, b * 1e-9) for a, b in wins]
    return names, out, info


def has_table(db, name):
    return db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (name,)).fetchone() is not None


def kernels(raw, stem):
    """[(start, end, name)] of the run's kernels (events.csv), by start."""
    return sorted((a, b, n) for a, b, n in at.read_events(raw, stem))


def busy_in(evs, lo, hi):
    """Kernel time in [lo, hi] (the union: concurrent kernels count once)."""
    t, end = 0.0, lo
    for a, b, _ in evs:
        a, b = max(a, lo, end), min(b, hi)
        if b > a:
            t += b - a
            end = b
    return t


def stretch_levels(samples, evs, lo, hi):
    """Each feature's level over [lo, hi]: its time-weighted mean over the samples inside, over the
    share of that time kernels cover."""
    acc, dur = [0.0] * len(FEATURES), 0.0
    for t0, t1, f in samples:
        if t0 >= lo and t1 <= hi:
            for m, x in enumerate(f):
                acc[m] += (x or 0.0) * (t1 - t0)
            dur += t1 - t0
    b = busy_in(evs, lo, hi)
    if dur <= 0 or b <= 0:
        return None
    share = b / (hi - lo)
    return [clip01(a / dur / share) for a in acc]


def merged(evs, lo, hi):
    """The kernels' time in [lo, hi] as disjoint spans in order (concurrent kernels count once)."""
    out = []
    for a, b, _ in sorted(e for e in evs if e[1] > lo and e[0] < hi):
        a, b = max(a, lo), min(b, hi)
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        elif b > a:
            out.append([a, b])
    return out


def stretch_clock(samples, clocks, evs, lo, hi):
    """The GPC clock while kernels ran over [lo, hi], MHz: the mean of the samples inside, each weighted by
    the kernels' time in it (None: no such sample, or no clock). Between the launches of a steady stretch
    the clock has no time to change: short kernels' samples count as much as their kernels cover."""
    spans = merged(evs, lo, hi)
    starts = [a for a, _ in spans]
    acc = dur = 0.0
    for (t0, t1, _), c in zip(samples, clocks):
        if c is None or t0 < lo or t1 > hi:
            continue
        k, cover = max(0, bisect.bisect_right(starts, t0) - 1), 0.0
        while k < len(spans) and spans[k][0] < t1:
            cover += max(0.0, min(t1, spans[k][1]) - max(t0, spans[k][0]))
            k += 1
        acc += c * cover
        dur += cover
    return acc / dur if dur > 0 else None


def steady_rows(raw):
    """calib rows: (source, name, calls, busy_s, power_w (above the quiet level, per kernel time), levels)."""
    rows = []
    for stem in at.stems(raw, "steady."):
        rows += stretch_rows(raw, stem, "mix")
    if os.path.exists(os.path.join(raw, "torch.steady.stderr.txt")):
        rows += stretch_rows(raw, "torch.steady", "torch")
    return rows


def stretch_rows(raw, stem, source):
    wins, ks = at.mix_lines(os.path.join(raw, stem + ".stderr.txt"))
    tr = at.trace_for(raw, stem, at.prefix_of(raw, stem))
    evs = kernels(raw, stem)
    _, samples, info = read_samples(os.path.join(raw, stem + ".sqlite"))
    out = []
    for win in wins:
        name = win.get("only") or stem[len("steady."):]
        ref = at.window_energy(tr, win, stem + " " + name)
        s, e = ref["start_s"], ref["end_s"]
        b = busy_in(evs, s, e)
        lv = stretch_levels(samples, evs, s + EDGE_S, e - EDGE_S)
        clk = stretch_clock(samples, info["clock_mhz"], evs, s + EDGE_S, e - EDGE_S)
        calls = sum(int(at.num(k, "launches", stem)) for k in ks if k.get("name") == name)
        w = ref["energy_j"] / b if ref["energy_j"] is not None and b > 0 else None
        out.append({"source": source, "name": name, "calls": calls, "busy_s": b, "power_w": w, "levels": lv,
                    "clock_mhz": clk, "note": ref.get("note", "")})
    return out


def reference_powers(raw, stem="torch.ref"):
    """op -> power above the quiet level per kernel time, from a run without the counters."""
    if not os.path.exists(os.path.join(raw, stem + ".stderr.txt")):
        return {}
    wins, _ = at.mix_lines(os.path.join(raw, stem + ".stderr.txt"))
    tr = at.trace_for(raw, stem, at.prefix_of(raw, stem))
    evs = kernels(raw, stem)
    out = {}
    for win in wins:
        ref = at.window_energy(tr, win, stem)
        b = busy_in(evs, ref["start_s"], ref["end_s"])
        if ref["energy_j"] is not None and b > 0:
            out[win.get("only", "?")] = ref["energy_j"] / b
    return out


def nnls(A, y, iters=5000):
    """min |A x - y|, x >= 0 (Lawson-Hanson active set)."""
    m, n = A.shape
    x, P = np.zeros(n), np.zeros(n, bool)
    w = A.T @ (y - A @ x)
    for _ in range(iters):
        if P.all() or w[~P].max(initial=-1) <= 1e-10:
            break
        j = np.where(~P, w, -np.inf).argmax()
        P[j] = True
        while True:
            z = np.zeros(n)
            z[P] = np.linalg.lstsq(A[:, P], y, rcond=None)[0]
            if (z[P] > 0).all():
                x = z
                break
            neg = P & (z <= 0)
            alpha = np.min(x[neg] / (x[neg] - z[neg]))
            x = x + alpha * (z - x)
            P &= x > 1e-12
        w = A.T @ (y - A @ x)
    return x


def fit(rows, use):
    A = np.array([[r["levels"][m] for m in use] for r in rows])
    y = np.array([r["power_w"] for r in rows])
    c = nnls(A, y)
    return c, A @ c - y


def pct(a, b):
    return None if a is None or not b else 100.0 * (a - b) / b


def f1(x):
    return "-" if x is None else "%.1f" % x


def step_levels(samples, evs, pool_s=0.0):
    """name -> (time_s, levels) over the samples: each sample's level (its value over
    the share of it kernels cover) shared among its names by their time in it. pool_s > 0: the samples
    first pooled into spans of pool_s (what a coarser interval would have given)."""
    if pool_s > 0:
        samples = pool(samples, pool_s)
    import bisect
    t0s = [t0 for t0, _, _ in samples]
    over = [None] * len(samples)  # per sample: name -> its time in it
    for a, b, n in evs:  # samples are in order and do not overlap: each kernel's are a run of them
        k = max(0, bisect.bisect_right(t0s, a) - 1)
        while k < len(samples) and samples[k][0] < b:
            o = min(b, samples[k][1]) - max(a, samples[k][0])
            if o > 0:
                d = over[k] = over[k] or {}
                d[n] = d.get(n, 0.0) + o
            k += 1
    acc, tim = {}, {}
    for (t0, t1, f), ov in zip(samples, over):
        if not ov:
            continue
        share = min(1.0, sum(ov.values()) / (t1 - t0))
        lv = [clip01((x or 0.0) / share) for x in f]  # at most 1, as counters.c's
        for n, o in ov.items():
            a = acc.setdefault(n, [0.0] * len(FEATURES))
            for m, x in enumerate(lv):
                a[m] += o * x
            tim[n] = tim.get(n, 0.0) + o
    return {n: (tim[n], [x / tim[n] for x in acc[n]]) for n in acc}


def pool(samples, span):
    out, cur, t_start, acc, dur = [], None, None, None, 0.0
    for t0, t1, f in samples:
        if cur is None or t0 - t_start >= span or t0 > cur + 1e-6:
            if cur is not None and dur > 0:
                out.append((t_start, cur, [a / dur for a in acc]))
            t_start, acc, dur = t0, [0.0] * len(FEATURES), 0.0
        for m, x in enumerate(f):
            acc[m] += (x or 0.0) * (t1 - t0)
        dur += t1 - t0
        cur = t1
    if cur is not None and dur > 0:
        out.append((t_start, cur, [a / dur for a in acc]))
    return out


def op_kernels(raw, stem="torch.steady"):
    """op -> the kernel names with >= 5 % of its stretch's kernel time (attrib_table's rule)."""
    wins, _ = at.mix_lines(os.path.join(raw, stem + ".stderr.txt"))
    evs = at.read_events(raw, stem)
    out = {}
    for win in wins:
        s, e = at.num(win, "start_s", stem), at.num(win, "end_s", stem)
        busy = {}
        for a, b, n in evs:
            if s <= a and b <= e:
                busy[n] = busy.get(n, 0.0) + (b - a)
        tot = sum(busy.values())
        out[win.get("only", "?")] = [n for n in sorted(busy, key=lambda n: -busy[n]) if busy[n] >= 0.05 * tot]
    return out


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__)
    raw, outdir = argv[1], argv[2]
    os.makedirs(outdir, exist_ok=True)
    rows = [r for r in steady_rows(raw) if r["levels"] is not None and r["power_w"] is not None]
    mix = [r for r in rows if r["source"] == "mix"]
    if len(mix) < 3:
        die(f"{raw}: {len(mix)} usable mix steady runs (3 at least)")
    use = [m for m in range(len(FEATURES)) if all(r["levels"][m] is not None for r in rows)]
    with open(os.path.join(outdir, "calib.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["source", "name", "calls", "busy_s", "power_w"] + [FEATURES[m] for m in use] +
                   ["clock_mhz", "note"])
        for r in rows:
            w.writerow([r["source"], r["name"], r["calls"], "%.6f" % r["busy_s"], "%.3f" % r["power_w"]] +
                       ["%.5f" % r["levels"][m] for m in use] +
                       ["" if r["clock_mhz"] is None else "%.1f" % r["clock_mhz"], r["note"]])
    torch_rows = [r for r in rows if r["source"] == "torch"]
    c, res = fit(mix, use)
    c_all, res_all = fit(rows, use)
    # each PyTorch operator predicted by a model fitted without it (leave one out): kernels the fit never saw
    c_loo = {r["name"]: fit([q for q in rows if q is not r], use)[0] for r in torch_rows}
    power = lambda cc, lv: float(sum(cc[k] * lv[m] for k, m in enumerate(use)))
    coef = lambda cc: ", ".join("c_%s = %.1f W" % (FEATURES[m], cc[k]) for k, m in enumerate(use))
    rms = lambda r: math.sqrt(float(np.mean(r ** 2)))
    lines = ["The model: P above the quiet level while kernels run = sum_m c_m * level_m, c >= 0, least squares",
             "  on the %d mix kernels only: %s; residual %.1f W rms" % (len(mix), coef(c), rms(res)),
             "  on all %d rows (mix and PyTorch): %s; residual %.1f W rms" % (len(rows), coef(c_all), rms(res_all)),
             "  mix_w: the mix-only model; loo_w: the model fitted on every other row (PyTorch operators only)", "",
             "%-13s %8s %8s %7s %8s %7s   %s" % ("kernel/op", "power_w", "mix_w", "err_%", "loo_w", "err_%",
                                              "levels " + " ".join("%6s" % FEATURES[m] for m in use))]
    refs = reference_powers(raw)
    for r in rows:
        r["model_w"] = power(c, r["levels"])
        loo = power(c_loo[r["name"]], r["levels"]) if r["name"] in c_loo else None
        r["loo_w"] = loo
        lines.append("%-13s %8.1f %8.1f %7s %8s %7s   %s" % (
            r["name"], r["power_w"], r["model_w"], f1(pct(r["model_w"], r["power_w"])), f1(loo),
            f1(pct(loo, r["power_w"])), " ".join("%6.3f" % r["levels"][m] for m in use)))
    errs = [abs(pct(r["loo_w"], r["power_w"])) for r in torch_rows]
    if errs:
        lines.append("leave one out over the %d PyTorch operators: |err| median %.1f %%, largest %.1f %%" % (
            len(errs), sorted(errs)[len(errs) // 2], max(errs)))
    if refs:
        lines += ["", "PyTorch operators: with the counters (calib.csv) against without them (torch.ref, the reference)",
                  "%-13s %10s %10s %7s %9s %7s" % ("op", "with_w", "ref_w", "diff_%", "loo_w", "err_%")]
        for r in torch_rows:
            if r["name"] in refs:
                ref = refs[r["name"]]
                lines.append("%-13s %10.1f %10.1f %7s %9s %7s" % (r["name"], r["power_w"], ref, f1(pct(r["power_w"], ref)),
                                                                  f1(r["loo_w"]), f1(pct(r["loo_w"], ref))))
    text = "\n".join(lines) + "\n"
    open(os.path.join(outdir, "model.txt"), "w").write(text)
    print(text)

    fine = [s for s in at.stems(raw, "torch.fine.")]
    ops = op_kernels(raw) if os.path.exists(os.path.join(raw, "torch.steady.events.csv")) or \
        os.path.exists(os.path.join(raw, "torch.steady.events.csv.gz")) else {}
    ref_of = {}
    for r in rows:
        if r["source"] == "torch":
            ref_of[r["name"]] = refs.get(r["name"], r["power_w"])
    for stem in fine:
        _, samples, info = read_samples(os.path.join(raw, stem + ".sqlite"))
        evs = kernels(raw, stem)
        iv = (info["interval_ns"] or 0) * 1e-9
        finel = step_levels(samples, evs)
        coarse = step_levels(samples, evs, pool_s=1e-3) if iv and iv < 1e-3 else {}
        model = lambda lv: power(c_all, lv)
        names = sorted(finel, key=lambda n: -finel[n][0])
        path = os.path.join(outdir, stem + ".step.csv")
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["name", "time_s", "model_w", "model_1ms_w"] + [FEATURES[m] for m in use] +
                       [FEATURES[m] + "_1ms" for m in use])
            for n in names:
                t, lv = finel[n]
                cl = coarse.get(n, (0, [None] * len(FEATURES)))[1]
                w.writerow([n, "%.6f" % t, "%.1f" % model(lv), "-" if cl[0] is None else "%.1f" % model(cl)] +
                           ["%.4f" % lv[m] for m in use] + ["-" if cl[m] is None else "%.4f" % cl[m] for m in use])
        print("%s: %d samples every %.1f us in %d windows, %s overflows, %.3f s decoding (this process)" %
              (stem, len(samples), iv * 1e6, len(info["windows"]), info["overflows"], info["busy_s"] or 0))
        print("  the 12 names with the most sampled time: the model's power (fitted on all rows) from the fine samples\n"
              "  and from them pooled to 1 ms")
        print("  %-60s %8s %8s %8s" % ("name", "time_ms", "fine_w", "1ms_w"))
        for n in names[:12]:
            t, lv = finel[n]
            cl = coarse.get(n)
            print("  %-60s %8.1f %8.1f %8s" % (n[:60], t * 1e3, model(lv), "-" if not cl else "%.1f" % model(cl[1])))
        if ops:
            print("  the operators' kernels in the step (the model fitted without the operator) against the operators'\n"
                  "  steady power (torch.ref)")
            print("  %-10s %9s %9s %7s %9s %7s" % ("op", "ref_w", "fine_w", "err_%", "1ms_w", "err_%"))
            for op, ks in ops.items():
                cc = c_loo.get(op, c_all)
                got = [(finel[k][0], power(cc, finel[k][1]), power(cc, coarse[k][1]) if k in coarse else None)
                       for k in ks if k in finel]
                if not got or op not in ref_of:
                    print("  %-10s %9s (its kernels not sampled in the step's windows)" % (op, f1(ref_of.get(op))))
                    continue
                tt = sum(g[0] for g in got)
                fw = sum(g[0] * g[1] for g in got) / tt
                cw = sum(g[0] * g[2] for g in got) / tt if all(g[2] is not None for g in got) else None
                print("  %-10s %9.1f %9.1f %7s %9s %7s" % (op, ref_of[op], fw, f1(pct(fw, ref_of[op])), f1(cw),
                                                           f1(pct(cw, ref_of[op]))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
