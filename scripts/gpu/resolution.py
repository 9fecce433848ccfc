#!/usr/bin/env python3
"""How much a run's power readings can say about its kernel names (issue 15): an independent check
of the estimator's "below resolution" on a run file, with numpy only.

  python3 scripts/gpu/resolution.py RUN.sqlite [--range NAME] [--reading power_buffer_w]

Over the span of the NVTX ranges named NAME (default "step"; the whole run without them), each
sample of the reading (default the H100's ~20 ms sample buffer) is modelled from the kernels'
activity on a 0.1 ms grid, seen through the reading's response in the run's sensor profile (rc:
exp(-t/C) after a delay; boxcar: a window after a delay):
  (a) P = B + p * busy      (busy: the fraction of the response's window with any kernel running)
  (b) P = B + sum_name p_name * a_name   (a_name: that name's share of the window; least squares)
It prints each model's residual (rms, W), the noise the profile gives the reading, the singular
values of (b)'s design (how collinear the names are), and per name its time and the standard error
of p_name implied by (b)'s residual: a name whose standard error is comparable to its power cannot
be resolved from these readings, whatever the estimator.
"""
import argparse
import json
import sqlite3
import sys

import numpy as np


def load(path, reading, range_name):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    rid = db.execute("SELECT id FROM readings WHERE name = ?", (reading,)).fetchone()
    if not rid:
        sys.exit(f"{path}: no reading {reading}")
    prof = db.execute("SELECT profile_json FROM sensor_profiles WHERE profile_json IS NOT NULL LIMIT 1").fetchone()
    model = None
    if prof:
        for r in json.loads(prof[0]).get("readings", []):
            if r.get("name") == reading:
                model = r
    if not model:
        sys.exit(f"{path}: the run's sensor profile has no model of {reading}")
    samples = np.array(db.execute(
        "SELECT COALESCE(value_t_ns, t_ns), value FROM samples WHERE reading = ? AND value IS NOT NULL "
        "ORDER BY 1", (rid[0],)).fetchall(), float)
    acts = db.execute("SELECT name, start_ns, end_ns FROM activities_named WHERE kind = 'kernel'").fetchall()
    spans = db.execute("SELECT r.start_ns, r.end_ns FROM nvtx_ranges r JOIN strings s ON s.id = r.name "
                       "WHERE s.value = ?", (range_name,)).fetchall()
    return model, samples, acts, spans


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run")
    ap.add_argument("--range", default="step")
    ap.add_argument("--reading", default="power_buffer_w")
    a = ap.parse_args()
    model, samples, acts, spans = load(a.run, a.reading, a.range)
    if spans:
        t0, t1 = min(s for s, _ in spans), max(e for _, e in spans)
    else:
        t0, t1 = min(s for _, s, _ in acts), max(e for _, _, e in acts)
    names = sorted({n for n, _, _ in acts})
    col = {n: i for i, n in enumerate(names)}
    dt = 100_000  # ns
    lead = 200_000_000
    g0 = t0 - lead
    nb = (t1 - g0) // dt + 2
    share = np.zeros((nb, len(names)), np.float32)
    for n, s, e in acts:
        if e <= g0 or s >= t1:
            continue
        s, e = max(s, g0), min(e, t1)
        i0, i1, j = (s - g0) // dt, (e - g0) // dt, col[n]
        if i0 == i1:
            share[i0, j] += (e - s) / dt
            continue
        share[i0, j] += ((i0 + 1) * dt + g0 - s) / dt
        share[i0 + 1:i1, j] += 1
        share[i1, j] += (e - (i1 * dt + g0)) / dt
    busy = np.minimum(share.sum(1), 1.0)
    delay = float(model.get("delay_s") or 0)
    if model.get("response") == "rc":
        c = float(model["capacitance_s"])
        k = np.exp(-np.arange(0, 8 * c, dt / 1e9) / c)
    else:
        k = np.ones(max(1, int(float(model.get("window_s") or model["period_s"]) / (dt / 1e9))))
    k = k / k.sum()
    sel = (samples[:, 0] > t0 + lead / 4) & (samples[:, 0] < t1)
    ts, p = samples[sel, 0], samples[sel, 1]
    if len(p) < 10:
        sys.exit(f"{a.run}: {len(p)} samples of {a.reading} inside the span")
    rows_busy, rows_names = [], []
    for t in ts:
        ie = int((t - delay * 1e9 - g0) // dt)
        lo = max(ie - len(k) + 1, 0)
        w = k[:ie - lo + 1]
        rows_busy.append(w @ busy[lo:ie + 1][::-1])
        rows_names.append(w @ share[lo:ie + 1][::-1])
    xb = np.column_stack([np.ones(len(p)), rows_busy])
    xn = np.array(rows_names)
    used = xn.sum(0) > 0
    xn = np.column_stack([np.ones(len(p)), xn[:, used]])
    cb, *_ = np.linalg.lstsq(xb, p, rcond=None)
    cn, *_ = np.linalg.lstsq(xn, p, rcond=None)
    rb = p - xb @ cb
    rn = p - xn @ cn
    sv = np.linalg.svd(xn, compute_uv=False)
    dof = max(len(p) - xn.shape[1], 1)
    s2 = float(rn @ rn) / dof
    cov = s2 * np.linalg.pinv(xn.T @ xn)
    se = np.sqrt(np.maximum(np.diag(cov)[1:], 0))
    used_names = [n for n, u in zip(names, used) if u]
    time_s = share[:, used].sum(0) * dt / 1e9
    print(f"run: {a.run}")
    print(f"span: {(t1 - t0) / 1e9:.2f} s ({len(spans)} '{a.range}' ranges), {len(p)} samples of {a.reading} "
          f"({model.get('response')}, delay {delay * 1e3:.1f} ms), {len(used_names)} kernel names")
    print(f"profile's noise of the reading: {model.get('rms_w', float('nan')):.2f} W rms")
    print(f"(a) baseline + one power for any kernel: B {cb[0]:.1f} W, p {cb[1]:.1f} W, residual {rb.std():.2f} W rms")
    print(f"(b) baseline + a power per name:       residual {rn.std():.2f} W rms "
          f"({len(p)} samples, {xn.shape[1]} unknowns)")
    print(f"(b)'s design: singular values largest {sv[0]:.3g}, smallest {sv[-1]:.3g} (condition {sv[0] / sv[-1]:.3g})")
    print("names by time: time_s, p_name (W, unconstrained least squares), its standard error (W)")
    for i in np.argsort(-time_s)[:15]:
        print(f"  {time_s[i]:7.3f} s  {cn[i + 1]:9.1f}  +- {se[i]:8.1f}  {used_names[i][:80]}")
    resolvable = int(np.sum(se < 0.1 * 500))
    print(f"names whose standard error is below 50 W (10 % of ~500 W): {resolvable} of {len(used_names)}")


if __name__ == "__main__":
    main()
