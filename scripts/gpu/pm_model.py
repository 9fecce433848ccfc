#!/usr/bin/env python3
"""Power from activity counters (issue 15): does a run's CUPTI PM sampling explain its power readings,
and what does it give each kernel name? An offline study of a run file recorded with
`truewatt run --activity-counters`, numpy only; not yet truewatt's estimator.

  python3 scripts/gpu/pm_model.py RUN.sqlite [--range NAME] [--device 0] [--top 12]

Over the span of the NVTX ranges named NAME (default "step"; the whole run without them):
  features on a 0.1 ms grid from the PM samples (each sample's value held over its span): those of
    src/estimate/counters.c (scripts/gpu/pm_features.py: sm, tensor, issue, dram, l2, and l1 where
    recorded) whose metrics the run recorded
  each sample of the reading (default the ~20 ms buffer) modelled as B + sum_f c_f * f, the features
  seen through the reading's response in the run's profile (as scripts/gpu/resolution.py does);
  beside it the model with one power for any kernel (busy). Prints both residuals (W rms), the
  coefficients with their standard errors, and per kernel name the energy above B that the fitted
  model gives the time it ran (the grid's modelled power above B shared among the kernels running,
  by time): a name's energy then comes from its own activity, not from a regression over names.
"""
import argparse
import json
import os
import sqlite3
import struct
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pm_features import FEATURES, feature_row  # noqa: E402  (counters.c's features: one implementation)

DT = 100_000  # ns, the grid


def features(db, dev, g0, nb):
    """Each feature (pm_features.py: counters.c's definitions) on the grid, a sample's value held over
    its span; the features whose metrics the run did not record are left out."""
    row = db.execute("SELECT metrics, interval_ns, reason FROM pm_devices WHERE device = ?", (dev,)).fetchone()
    if not row or not row[0]:
        sys.exit(f"no activity counters for device {dev}: {row[2] if row else 'no pm_devices row'}")
    names = row[0].split(",")
    need = {"sm__cycles_active.avg", "gpc__cycles_elapsed.max"}
    if not need <= set(names):
        sys.exit(f"the run's metrics lack {sorted(need - set(names))}")
    fmt = "<%df" % len(names)
    grid = np.zeros((nb, len(FEATURES)), np.float32)
    recorded = None
    have = np.zeros(nb, bool)
    n = 0
    for start, dur, v in db.execute("SELECT start_ns, dur_ns, v FROM pm_samples WHERE device = ? ORDER BY start_ns",
                                    (dev,)):
        i0, i1 = (start - g0) // DT, (start + dur - g0) // DT + 1
        if i1 <= 0 or i0 >= nb:
            continue
        i0, i1 = max(i0, 0), min(i1, nb)
        row_f = feature_row(names, struct.unpack(fmt, v))
        if recorded is None:
            recorded = [m for m, x in enumerate(row_f) if x is not None]
        grid[i0:i1] = [x or 0.0 for x in row_f]
        have[i0:i1] = True
        n += 1
    f = {FEATURES[m]: grid[:, m] for m in (recorded or [0])}
    return f, have, n, int(row[1] or 0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run")
    ap.add_argument("--range", default="step")
    ap.add_argument("--device", type=int, default=0)
    ap.add_argument("--reading", default="power_buffer_w")
    ap.add_argument("--top", type=int, default=12)
    a = ap.parse_args()
    db = sqlite3.connect(f"file:{a.run}?mode=ro", uri=True)
    prof = db.execute("SELECT profile_json FROM sensor_profiles WHERE profile_json IS NOT NULL LIMIT 1").fetchone()
    model = next((r for r in json.loads(prof[0]).get("readings", []) if r.get("name") == a.reading), None) if prof else None
    if not model:
        sys.exit(f"{a.run}: no profile model of {a.reading}")
    samples = np.array(db.execute(
        "SELECT COALESCE(s.value_t_ns, s.t_ns), s.value FROM samples s JOIN readings r ON r.id = s.reading "
        "WHERE r.name = ? AND s.value IS NOT NULL ORDER BY 1", (a.reading,)).fetchall(), float)
    acts = db.execute("SELECT name, start_ns, end_ns FROM activities_named WHERE kind = 'kernel' AND device = ?",
                      (a.device,)).fetchall()
    spans = db.execute("SELECT r.start_ns, r.end_ns FROM nvtx_ranges r JOIN strings s ON s.id = r.name "
                       "WHERE s.value = ?", (a.range,)).fetchall()
    if spans:
        t0, t1 = min(s for s, _ in spans), max(e for _, e in spans)
    else:
        t0, t1 = min(s for _, s, _ in acts), max(e for _, _, e in acts)
    lead = 200_000_000
    g0 = t0 - lead
    nb = (t1 - g0) // DT + 2
    f, have, npm, interval = features(db, a.device, g0, nb)
    names = sorted({n for n, _, _ in acts})
    col = {n: i for i, n in enumerate(names)}
    share = np.zeros((nb, len(names)), np.float32)
    for n, s, e in acts:
        if e <= g0 or s >= t1:
            continue
        s, e = max(s, g0), min(e, t1)
        i0, i1, j = (s - g0) // DT, (e - g0) // DT, col[n]
        if i0 == i1:
            share[i0, j] += (e - s) / DT
            continue
        share[i0, j] += ((i0 + 1) * DT + g0 - s) / DT
        share[i0 + 1:i1, j] += 1
        share[i1, j] += (e - (i1 * DT + g0)) / DT
    busy = np.minimum(share.sum(1), 1.0)
    delay = float(model.get("delay_s") or 0)
    if model.get("response") == "rc":
        c = float(model["capacitance_s"])
        k = np.exp(-np.arange(0, 8 * c, DT / 1e9) / c)
    else:
        k = np.ones(max(1, int(float(model.get("window_s") or model["period_s"]) / (DT / 1e9))))
    k = k / k.sum()
    sel = (samples[:, 0] > t0 + lead / 4) & (samples[:, 0] < t1)
    ts, p = samples[sel, 0], samples[sel, 1]
    fn = list(f)
    F = np.column_stack([f[x] for x in fn])
    xb, xf, ok = [], [], []
    for t in ts:
        ie = int((t - delay * 1e9 - g0) // DT)
        lo = max(ie - len(k) + 1, 0)
        w = k[:ie - lo + 1]
        xb.append(w @ busy[lo:ie + 1][::-1])
        xf.append(w @ F[lo:ie + 1][::-1])
        ok.append(have[lo:ie + 1].all())
    ok = np.array(ok)
    xb = np.column_stack([np.ones(ok.sum()), np.array(xb)[ok]])
    xf = np.column_stack([np.ones(ok.sum()), np.array(xf)[ok]])
    p = p[ok]
    cb, *_ = np.linalg.lstsq(xb, p, rcond=None)
    cf, *_ = np.linalg.lstsq(xf, p, rcond=None)
    rb, rf = p - xb @ cb, p - xf @ cf
    cov = (rf @ rf) / max(len(p) - xf.shape[1], 1) * np.linalg.pinv(xf.T @ xf)
    print(f"run: {a.run}")
    print(f"span {(t1 - t0) / 1e9:.2f} s, {len(p)} samples of {a.reading} with counters throughout, "
          f"{npm} PM samples every {interval / 1e6:g} ms, {len(names)} kernel names")
    print(f"busy only:        B {cb[0]:.1f} W + {cb[1]:.1f} W x busy: residual {rb.std():.2f} W rms")
    print(f"activity model:   B {cf[0]:.1f} W, residual {rf.std():.2f} W rms (the profile's noise "
          f"{model.get('rms_w', float('nan')):.2f} W)")
    for i, x in enumerate(fn):
        print(f"  c_{x:7s} {cf[i + 1]:8.1f} +- {np.sqrt(cov[i + 1, i + 1]):6.1f} W at full activity")
    above = F @ cf[1:]  # modelled power above B on the grid
    tot = share.sum(1)
    w = np.divide(share, tot[:, None], out=np.zeros_like(share), where=tot[:, None] > 0)
    ej = (w * above[:, None]).sum(0) * DT / 1e9
    tm = share.sum(0) * DT / 1e9
    print(f"per name (top {a.top} by energy): energy above B (J), time (s), mean power above B (W)")
    for i in np.argsort(-ej)[:a.top]:
        print(f"  {ej[i]:9.3f} J {tm[i]:7.3f} s {ej[i] / tm[i] if tm[i] > 0 else float('nan'):7.1f} W  {names[i][:90]}")
    print(f"all names: {ej.sum():.1f} J above B over {tm.sum():.2f} s of kernels")


if __name__ == "__main__":
    main()
