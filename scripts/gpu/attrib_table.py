#!/usr/bin/env python3
"""The tables of scripts/gpu-attrib (docs/attrib.md): truewatt's per-kernel estimates in the
apps/mix patterns and the PyTorch step, against references measured with the energy counter.

  attrib_table.py mix   RAW OUT   -> OUT/attrib.csv, conservation.csv, solo.csv, naive.csv, additivity.csv
  attrib_table.py torch RAW OUT   -> OUT/torch_repeat.csv, torch_steady.csv

RAW holds, per run STEM: STEM.report.json (`truewatt run --json`), STEM.stderr.txt (the program's
output: its `mix.window` and `mix.kernel` lines), STEM.trace.csv[.gz] and STEM.events.csv[.gz].
Stems: full.PATTERN, solo.PATTERN.NAME, steady.NAME, torch.run1, torch.run2, torch.steady.

The reference energy of a window (a pattern, or a steady stretch) comes from the energy counter,
never from truewatt's estimator:
  E_above = E(tail) - E(start) - (P_before + P_after) / 2 * (tail - start),   tail = end + MARGIN_S
P_before and P_after: the mean power of the quiet stretches before and after the window (from
MARGIN_S after each stretch starts to its end), from the sample buffer (scaled by its gain on the
counter over the whole run), else the instant reading, else the counter's slope (the note column
says which). E(start) is the mean over the counter's
readings in the quiet stretch before of E_i + P_before (start - t_i), E(tail) the mean over its
readings in the stretch after (from tail on) of E_j - P_after (t_j - tail): the counter
accumulates, so nothing inside the window is interpolated, and the GPU's tail after its last
kernel counts. Each reading is up to one counter period old (100 ms on an H100); averaging every
reading of a stretch shrinks that error, and the uncertainty column gives it with the
baselines' difference.
Only the functions named report_* know the layout of truewatt's JSON report.
"""
import csv
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import textfile  # noqa: E402  (one way to open a kept text file)

MARGIN_S = 0.3  # after a stretch starts or a window ends: the sensor's lag and the GPU's tail


def die(msg):
    sys.exit("attrib_table: " + msg)


# ---------------------------------------------------------------- files
def open_text(path):
    f = textfile.open_text(path)
    if f is None:
        die(f"{path}: no such file (nor {path}.gz)")
    return f


def read_json(path):
    try:
        with open_text(path) as f:
            return json.load(f)
    except ValueError as e:
        die(f"{path}: not valid JSON: {e}")


def mix_lines(path):
    """The program's `mix.window` and `mix.kernel` lines: (windows, kernels), dicts of strings."""
    windows, kernels = [], []
    with open_text(path) as f:
        for no, line in enumerate(f, 1):
            words = line.split()
            if not words or words[0] not in ("mix.window", "mix.kernel"):
                continue
            kv = {}
            for w in words[1:]:
                if "=" not in w:
                    die(f"{path}:{no}: '{w}' is not KEY=VALUE")
                k, v = w.split("=", 1)
                kv[k] = v
            (windows if words[0] == "mix.window" else kernels).append(kv)
    if not windows:
        die(f"{path}: no mix.window line (did the program finish?)")
    return windows, kernels


def num(d, key, where):
    try:
        return float(d[key])
    except (KeyError, ValueError):
        die(f"{where}: '{key}' is missing or not a number")


class Trace:
    """The columns of a truewatt trace that the references use, for one GPU (prefix)."""

    def __init__(self, path, prefix):
        self.path = path
        with open_text(path) as f:
            rows = csv.reader(line for line in f if not line.startswith("#"))
            try:
                head = next(rows)
            except StopIteration:
                die(f"{path}: no header")
            col = {c: i for i, c in enumerate(head)}
            body = list(rows)
        self.counter = self._series(path, body, col, prefix + "energy_j")
        self.instant = self._series(path, body, col, prefix + "power_instant_w", required=False)
        self.buffer = self._series(path, body, col, prefix + "power_buffer_w", required=False)
        if len(self.counter) < 2:
            die(f"{path}: fewer than 2 readings of {prefix}energy_j")
        self.buffer_gain = self._buffer_gain()

    def _buffer_gain(self):
        """The sample buffer's scale against the counter over the whole run: the slope of the
        counter's readings on the buffer's running integral (each sample the mean over the time
        since the one before), by least squares. Quiet stretches' power comes from the buffer
        (fine in time) but the energies from the counter: without this, a 0.5 % difference
        between the two, times 145 W and a 6 s window, is 4 J on every name's reference. Every
        counter reading counts, so the readings' ages (up to one counter period) average out.
        1 when there is no buffer or too few readings to tell."""
        b = self.buffer
        if len(b) < 10:
            return 1.0
        cum, acc = [b[0][0]], [0.0]
        for (t0, _), (t1, w1) in zip(b, b[1:]):
            cum.append(t1)
            acc.append(acc[-1] + w1 * (t1 - t0))
        pts = []
        j = 0
        for t, e in self.counter:
            if t < cum[0] or t > cum[-1]:
                continue
            while cum[j + 1] < t:
                j += 1
            f = (t - cum[j]) / (cum[j + 1] - cum[j])
            pts.append((acc[j] + f * (acc[j + 1] - acc[j]), e))
        if len(pts) < 5:
            return 1.0
        mx = sum(x for x, _ in pts) / len(pts)
        my = sum(y for _, y in pts) / len(pts)
        sxx = sum((x - mx) ** 2 for x, _ in pts)
        return sum((x - mx) * (y - my) for x, y in pts) / sxx if sxx > 0 else 1.0

    @staticmethod
    def _series(path, rows, col, name, required=True):
        if name not in col:
            if required:
                die(f"{path}: no column {name}")
            return []
        i, it = col[name], col.get(name + "_t_s", col.get("t_s"))
        out = []
        for no, r in enumerate(rows, 1):
            if i < len(r) and r[i] != "":
                try:
                    t, v = float(r[it]), float(r[i])
                except ValueError:
                    die(f"{path}: data row {no}: {name} '{r[i]}' or its time '{r[it]}' is not a number")
                if not out or t > out[-1][0]:
                    out.append((t, v))
        return out


def trace_for(raw, stem, prefix):
    return Trace(os.path.join(raw, stem + ".trace.csv"), prefix)


# ---------------------------------------------------------------- the report's contract
def report_device(rep, where):
    """The device the program ran on: the one with the most kernel launches (not the most energy:
    a solo run of a nearly idle kernel has next to none)."""
    devs = rep.get("devices")
    if not isinstance(devs, list) or not devs:
        die(f"{where}: no 'devices' list")

    def launches(d):
        return sum(n.get("launches") or 0 for n in d.get("names") or [] if n.get("kind", "kernel") == "kernel")

    return max(devs, key=launches)


def report_prefix(dev, trace_head_has_plain):
    """The trace's column prefix of the device: its own key, else '' for a one-GPU trace."""
    p = dev.get("column_prefix")
    if isinstance(p, str):
        return p
    return "" if trace_head_has_plain else "gpu%d_" % int(dev.get("index", 0))


def report_names(dev):
    """name -> {kind, launches, time_s, energy_j, energy_sd_j, status, upper_j, group}"""
    return {n["name"]: n for n in dev.get("names") or []}


def report_groups(dev):
    return {g["id"]: g for g in dev.get("groups") or []}


def report_estimate(dev, where):
    """The estimate's terms; {} (and a warning: the conservation row stays empty) without them."""
    e = dev.get("estimate")
    if not isinstance(e, dict):
        print(f"attrib_table: {where}: the device has no 'estimate' object", file=sys.stderr)
        return {}
    return e


def report_pm_recorded(dev):
    """Whether the run sampled the activity counters (PM sampling raises the GPU's power while on)."""
    return bool((dev.get("activity_counters") or {}).get("recorded"))


def device_and_prefix(raw, stem):
    """The run's device in its report, and that device's column prefix in its trace."""
    rep = read_json(os.path.join(raw, stem + ".report.json"))
    dev = report_device(rep, stem + ".report.json")
    with open_text(os.path.join(raw, stem + ".trace.csv")) as f:
        head = next(csv.reader(line for line in f if not line.startswith("#")), [])
    return dev, report_prefix(dev, "energy_j" in head)


def prefix_of(raw, stem):
    return device_and_prefix(raw, stem)[1]


# ---------------------------------------------------------------- the counter reference
def stretch_power(tr, lo, hi):
    """Mean power over a quiet stretch [lo, hi]: the mean of the driver's sample buffer (every
    ~20 ms on an H100), else of the instant reading, else the counter's slope (two readings at
    least MARGIN_S apart; the least precise: each reading is up to one counter period old).
    Returns (watts, basis) or (None, why)."""
    for series, basis, gain in ((tr.buffer, "power_buffer_w", tr.buffer_gain), (tr.instant, "power_instant_w", 1.0)):
        p = [w for t, w in series if lo <= t <= hi]
        if p:
            return gain * sum(p) / len(p), basis + ("" if gain == 1.0 else " x %.5f (its gain on the counter)" % gain)
    r = [(t, e) for t, e in tr.counter if lo <= t <= hi]
    if len(r) >= 2 and r[-1][0] - r[0][0] >= MARGIN_S:
        return (r[-1][1] - r[0][1]) / (r[-1][0] - r[0][0]), "counter slope"
    return None, "no buffer, instant or counter pair in [%.3f, %.3f] s" % (lo, hi)


def counter_period(tr):
    """The median time between readings whose value changed: the counter's update period, or
    the reading period where that is longer."""
    ch = [t1 - t0 for (t0, e0), (t1, e1) in zip(tr.counter, tr.counter[1:]) if e1 != e0]
    return sorted(ch)[len(ch) // 2] if ch else 0.0


def window_energy(tr, win, where):
    """Energy above the baseline over a window, from the counter (module doc): a dict with
    energy_j (or None and note), its terms and an uncertainty."""
    g = lambda k: num(win, k, where)
    qb0, start, end, qa1 = g("quiet_before_start_s"), g("start_s"), g("end_s"), g("quiet_after_end_s")
    out = {"start_s": start, "end_s": end, "energy_j": None}
    tail = end + MARGIN_S  # the GPU is back at its baseline
    before = [(t, e) for t, e in tr.counter if qb0 + MARGIN_S <= t <= start]
    after = [(t, e) for t, e in tr.counter if tail <= t <= qa1]
    if not before or not after:
        out["note"] = ("no counter reading in the quiet stretch %s the window: make the quiet stretches "
                       "longer than the counter's period (mix --quiet)" % ("before" if not before else "after"))
        return out
    pb, nb = stretch_power(tr, qb0 + MARGIN_S, start)
    pa, na = stretch_power(tr, tail, qa1)
    if pb is None or pa is None:
        out["note"] = "no baseline: " + (nb if pb is None else na)
        return out
    # the counter at the window's start and at its tail, from every reading of each stretch
    e_start = sum(e + pb * (start - t) for t, e in before) / len(before)
    e_tail = sum(e - pa * (t - tail) for t, e in after) / len(after)
    base_j = (pb + pa) / 2 * (tail - start)
    # the baselines' difference over the span, and each reading's age (uniform over a period)
    per = counter_period(tr)
    age_j = (pb + pa) / 2 * per / math.sqrt(12) * math.sqrt(1 / len(before) + 1 / len(after))
    out.update(energy_j=e_tail - e_start - base_j, counter_j=e_tail - e_start, baseline_j=base_j,
               t_b=before[-1][0], t_a=after[0][0], baseline_before_w=pb, baseline_after_w=pa,
               unc_j=abs(pa - pb) * (tail - start) / 2 + age_j,
               note="baseline from " + (nb if nb == na else nb + " / " + na))
    return out


# ---------------------------------------------------------------- naive methods
def read_events(raw, stem):
    ev = []
    with open_text(os.path.join(raw, stem + ".events.csv")) as f:
        for no, r in enumerate(csv.DictReader(line for line in f if not line.startswith("#")), 2):
            if r.get("kind") != "kernel":
                continue
            try:
                ev.append((float(r["start_s"]), float(r["end_s"]), r["name"]))
            except (KeyError, ValueError, TypeError):
                die(f"{stem}.events.csv:{no}: start_s/end_s/name missing or not numbers")
    return ev


def overlap(a0, a1, b0, b1):
    return max(0.0, min(a1, b1) - max(a0, b0))


def naive_timeshare(tr, ref, events):
    """Each counter interval's energy above the baseline, shared among the kernels running in it
    by their time in it (what truewatt did with ~1 s counter intervals)."""
    pb, pa = ref["baseline_before_w"], ref["baseline_after_w"]
    out = {}
    r = [(t, e) for t, e in tr.counter if ref["t_b"] <= t <= ref["t_a"]]
    evs = sorted(events)
    for (t0, e0), (t1, e1) in zip(r, r[1:]):
        above = (e1 - e0) - (pb + pa) / 2 * (t1 - t0)
        share = {}
        for s, e, n in evs:
            if s >= t1:
                break
            o = overlap(s, e, t0, t1)
            if o > 0:
                share[n] = share.get(n, 0) + o
        tot = sum(share.values())
        for n, o in share.items():
            out[n] = out.get(n, 0) + above * o / tot
    return out


def naive_instant(tr, ref, events):
    """Each instant-power reading above the quiet-before level, times the time to the next
    reading, shared equally among the kernels running at that instant."""
    if not tr.instant:
        return {}
    lo = ref["t_b"]
    quiet = [w for t, w in tr.instant if lo <= t <= ref["start_s"]]
    if not quiet:
        return {}
    base = sum(quiet) / len(quiet)
    evs = sorted(events)
    out, j = {}, 0
    for (t, w), (t1, _) in zip(tr.instant, tr.instant[1:]):
        if not ref["start_s"] <= t <= ref["end_s"]:
            continue
        while j < len(evs) and evs[j][0] < t - 1.0:  # no kernel here lasts 1 s: those are over
            j += 1
        running = []
        for s, e, n in evs[j:]:
            if s > t:
                break
            if t <= e:
                running.append(n)
        for n in running:
            out[n] = out.get(n, 0) + (w - base) * (t1 - t) / len(running)
    return out


# ---------------------------------------------------------------- formatting
def f6(x):
    return "" if x is None or (isinstance(x, float) and not math.isfinite(x)) else "%.6g" % x


def p1(x):
    """one decimal, never '-0.0'"""
    return "" if x is None else "%.1f" % (round(x, 1) + 0.0)


def pct(est, ref):
    if est is None or ref is None or ref == 0:
        return None
    return 100.0 * (est / ref - 1.0)


def busy_reference(raw, p, name, launches, prefix, steady):
    """The busy-solo reference of NAME in pattern P (busy.P.NAME, `mix --only NAME --fill-wait`): the
    energy above the quiet baseline over the window, less the fills' own energy (their summed time,
    from cudaEvents, times the wait kernel's power above the baseline from steady.wait_1ms), per
    launch. None when the run or the steady wait run is missing."""
    stem = "busy.%s.%s" % (p, name)
    if not os.path.exists(os.path.join(raw, stem + ".stderr.txt")):
        return None
    wins, ks = mix_lines(os.path.join(raw, stem + ".stderr.txt"))
    w = wins[0]
    if "fill_time_s" not in w:
        die(f"{stem}: the mix.window line has no fill_time_s (not a --fill-wait run)")
    wait_j, _, wait_dur = steady.get("wait_1ms", (None, None, None))
    if wait_j is None or not wait_dur:
        die(f"{stem}: no steady.wait_1ms run for the fills' energy")
    wait_w = wait_j / wait_dur
    ref = window_energy(trace_for(raw, stem, prefix), w, stem)
    if ref["energy_j"] is None:
        return None
    return (ref["energy_j"] - wait_w * num(w, "fill_time_s", stem)) / launches


def loo_reference(raw, p, name, launches):
    """NAME's leave-one-out reference in pattern P: the energy above the baseline of the full pattern run
    as a reference (ref.P) less that of the pattern without NAME's launches (loo.P.NAME, `mix P --without
    NAME`), per launch: what NAME adds to the pattern where the others keep the GPU as they keep it in the
    full run (its clocks, its temperature), which solo leaves out. (loo_j, its uncertainty), or (None,
    None) when either run is missing or has no energy."""
    refs = []
    for stem in ("ref.%s" % p, "loo.%s.%s" % (p, name)):
        if not os.path.exists(os.path.join(raw, stem + ".stderr.txt")):
            return None, None
        wins, ks = mix_lines(os.path.join(raw, stem + ".stderr.txt"))
        if stem.startswith("loo.") and any(k.get("name") == name for k in ks):
            die(f"{stem}: {name} ran in its leave-one-out run (mix --without not honoured)")
        ref = window_energy(trace_for(raw, stem, prefix_of(raw, stem)), wins[0], stem)
        if ref["energy_j"] is None:
            return None, None
        refs.append(ref)
    full, without = refs
    return ((full["energy_j"] - without["energy_j"]) / launches,
            math.hypot(full["unc_j"], without["unc_j"]) / launches)


def whole_reference(raw, p, dev, full_ref):
    """The whole pattern's energy above its quiet level and where it comes from: the reference run of the
    pattern (ref.P) where there is one, else the full run's own window where it did not sample the
    activity counters; else (None, why): PM sampling's windows raise the full run's quiet stretches by
    up to its own power (~30 W on an H100 or H200), which its reference would take for the baseline."""
    stem = "ref." + p
    if os.path.exists(os.path.join(raw, stem + ".stderr.txt")):
        wins, _ = mix_lines(os.path.join(raw, stem + ".stderr.txt"))
        return window_energy(trace_for(raw, stem, prefix_of(raw, stem)), wins[0], stem)["energy_j"], stem
    if report_pm_recorded(dev):
        return None, "full.%s sampled the activity counters (its quiet stretches hold that power): none" % p
    return full_ref["energy_j"], "full." + p


def speed_vs_solo(full_dur, solo_dur):
    """How much faster (per cent) a launch ran in the full pattern than in its solo run. The solo run is the
    truth only where the kernel ran the same: on the H100, with the other kernels left out, the GPU idles
    longer between launches and a short compute kernel ran up to 66 % slower (lower clocks), drawing less
    energy per launch than in the full pattern. Rows where this is more than a few per cent compare
    unlike runs."""
    if full_dur is None or solo_dur is None or full_dur <= 0:
        return None
    return 100.0 * (solo_dur / full_dur - 1.0)


def write_csv(path, header, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        for r in rows:
            w.writerow(["" if v is None else (f6(v) if isinstance(v, float) else v) for v in r])


def stems(raw, prefix):
    names = set()
    for f in os.listdir(raw):
        if f.startswith(prefix) and f.endswith((".stderr.txt")):
            names.add(f[: -len(".stderr.txt")])
    return sorted(names)


# ---------------------------------------------------------------- mix
PATTERN_ORDER = ["bursts", "mixed", "mixed-even", "streams", "steps"]


def steady_refs(raw):
    """NAME -> (steady_j per launch, window dict, mean duration s) from the steady.NAME runs."""
    out = {}
    for stem in stems(raw, "steady."):
        name = stem[len("steady."):]
        wins, ks = mix_lines(os.path.join(raw, stem + ".stderr.txt"))
        tr = trace_for(raw, stem, prefix_of(raw, stem))
        ref = window_energy(tr, wins[0], stem)
        n = sum(int(num(k, "launches", stem)) for k in ks if k.get("name") == name)
        dur = next((num(k, "mean_duration_s", stem) for k in ks if k.get("name") == name), None)
        out[name] = (ref["energy_j"] / n if ref["energy_j"] is not None and n else None, ref, dur)
    return out


def covers(r):
    """'yes'/'no': the reference within the estimate's +- 2 sd, or under a below-resolution bound"""
    if r["solo"] is None:
        return ""
    if r["status"] == "below_resolution" and r["upper"] is not None:
        return "yes" if r["solo"] <= r["upper"] / r["launches"] else "no"
    if r["est"] is None or r["sd"] is None:
        return ""
    return "yes" if abs(r["est"] - r["solo"]) <= 2 * r["sd"] else "no"


def cmd_mix(raw, outdir):
    steady = steady_refs(raw)
    patterns = [s[len("full."):] for s in stems(raw, "full.")]
    patterns.sort(key=lambda p: (PATTERN_ORDER.index(p) if p in PATTERN_ORDER else 99, p))
    if not patterns:
        die(f"{raw}: no full.PATTERN.stderr.txt")
    attrib, cons, solo_rows, naive_rows, table, additive = [], [], [], [], [], []
    for p in patterns:
        stem = "full." + p
        wins, ks = mix_lines(os.path.join(raw, stem + ".stderr.txt"))
        dev, prefix = device_and_prefix(raw, stem)
        names, groups = report_names(dev), report_groups(dev)
        est = report_estimate(dev, stem + ".report.json")
        tr = trace_for(raw, stem, prefix)
        full_ref = window_energy(tr, wins[0], stem)
        kernels = {k["name"]: k for k in ks}

        # conservation: the report's own terms
        counter, kj = est.get("counter_j"), (est.get("kernels_j") or 0) + (est.get("copies_j") or 0)
        base = est.get("baseline_j")
        cerr = pct(kj + base, counter) if counter and base is not None else None
        cons.append([p, counter, kj if est else None, base, cerr])

        # naive methods, on the full run's own trace and timeline
        ts, inst = {}, {}
        if full_ref["energy_j"] is not None:
            evs = [e for e in read_events(raw, stem) if e[2] in kernels]
            ts, inst = naive_timeshare(tr, full_ref, evs), naive_instant(tr, full_ref, evs)

        rows = {}
        for name, k in kernels.items():
            launches = int(num(k, "launches", stem))
            sstem = "solo.%s.%s" % (p, name)
            solo_j, sref, solo_lag, solo_dur = None, {"note": "no solo run"}, None, None
            if os.path.exists(os.path.join(raw, sstem + ".stderr.txt")):
                swins, sks = mix_lines(os.path.join(raw, sstem + ".stderr.txt"))
                sref = window_energy(trace_for(raw, sstem, prefix_of(raw, sstem)), swins[0], sstem)
                sl = sum(int(num(x, "launches", sstem)) for x in sks if x.get("name") == name)
                if sl != launches:
                    die(f"{sstem}: {sl} launches of {name}, the full run had {launches}: not the same plan")
                if sref["energy_j"] is not None:
                    solo_j = sref["energy_j"] / launches
                solo_lag = next((x.get("gpu_lag_mean_s") for x in sks if x.get("name") == name), None)
                solo_dur = next((num(x, "mean_duration_s", sstem) for x in sks if x.get("name") == name), None)
            solo_rows.append([p, name, launches, sref.get("start_s"), sref.get("end_s"), sref.get("counter_j"),
                              sref.get("baseline_before_w"), sref.get("baseline_after_w"), sref.get("baseline_j"),
                              sref.get("energy_j"), sref.get("unc_j"), solo_j, k.get("gpu_lag_mean_s"), solo_lag,
                              sref.get("note", "")])
            n = names.get(name)
            estimate = sd = None
            status = "missing"
            if n is not None:
                status = n.get("status", "ok")
                rl = n.get("launches") or 0
                if rl != launches:
                    print(f"attrib_table: {p}/{name}: the report counts {rl} launches, mix {launches}",
                          file=sys.stderr)
                if status in ("ok", "at_power_bound") and rl and n.get("energy_j") is not None:
                    # at the power bound: the figure reported (bound x time), judged like an estimate;
                    # its sd is the data's with the bound freed, no interval around it (docs/methods.md)
                    estimate = n["energy_j"] / rl
                    sd = (n.get("energy_sd_j") or 0) / rl if status == "ok" else None
            unc = sref.get("unc_j")
            busy = busy_reference(raw, p, name, launches, prefix_of(raw, stem), steady)
            loo, loo_unc = loo_reference(raw, p, name, launches)
            rows[name] = dict(busy=busy, loo=loo, loo_unc=loo_unc, launches=launches, dur=num(k, "mean_duration_s", stem),
                              steady=steady.get(name, (None,))[0], solo=solo_j, est=estimate, sd=sd, status=status,
                              solo_unc=unc / launches if unc is not None else None,
                              upper=(n or {}).get("upper_j"), group=(n or {}).get("group"), solo_dur=solo_dur)
            naive_rows.append([p, name, launches, solo_j, estimate, pct(estimate, solo_j),
                               ts.get(name, 0) / launches if ts else None,
                               pct(ts.get(name, 0) / launches, solo_j) if ts else None,
                               inst.get(name, 0) / launches if inst else None,
                               pct(inst.get(name, 0) / launches, solo_j) if inst else None])
        # the references' sum against the whole pattern's energy above its quiet level (the same counter
        # method): a conserving estimate cannot meet every solo reference where they add up to more
        solo_sum = (sum(r["solo"] * r["launches"] for r in rows.values())
                    if rows and all(r["solo"] is not None for r in rows.values()) else None)
        whole, source = whole_reference(raw, p, dev, full_ref)
        additive.append([p, source, whole, solo_sum, pct(solo_sum, whole)])
        for name, r in rows.items():
            attrib.append([p, name, r["launches"], r["dur"], r["steady"], r["solo"], r["est"], r["sd"],
                           pct(r["est"], r["solo"]), r["solo_dur"], speed_vs_solo(r["dur"], r["solo_dur"]), r["busy"],
                           pct(r["est"], r["busy"]), r["loo"], r["loo_unc"], pct(r["est"], r["loo"])])
            table.append((p, name, r, ts, inst))
        # a group of names the data cannot tell apart: one row, its energy against the members' solo sum
        for gid, g in groups.items():
            members = [m for m in g.get("names") or [] if m in rows]
            if not members:
                continue
            L = sum(rows[m]["launches"] for m in members)
            solo_sum = (sum(rows[m]["solo"] * rows[m]["launches"] for m in members)
                        if all(rows[m]["solo"] is not None for m in members) else None)
            steady_sum = (sum(rows[m]["steady"] * rows[m]["launches"] for m in members)
                          if all(rows[m]["steady"] is not None for m in members) else None)
            est_g = g.get("energy_j")
            r = dict(launches=L, dur=sum(rows[m]["dur"] * rows[m]["launches"] for m in members) / L,
                     steady=steady_sum / L if steady_sum is not None else None,
                     solo=solo_sum / L if solo_sum is not None else None,
                     est=est_g / L if est_g is not None else None,
                     sd=(g.get("energy_sd_j") or 0) / L, status="group", upper=None, group=gid, solo_unc=None)
            gname = "+".join(members)
            attrib.append([p, gname, L, r["dur"], r["steady"], r["solo"], r["est"], r["sd"], pct(r["est"], r["solo"]),
                           None, None, None, None, None, None, None])
            table.append((p, gname, r, {}, {}))

    write_csv(os.path.join(outdir, "attrib.csv"),
              ["pattern", "name", "launches", "mean_duration_s", "steady_j", "solo_j", "estimate_j", "sd_j",
               "error_pct", "solo_mean_duration_s", "speed_vs_solo_pct", "busy_j", "busy_error_pct", "loo_j", "loo_unc_j",
               "loo_error_pct"], attrib)
    write_csv(os.path.join(outdir, "conservation.csv"),
              ["pattern", "counter_j", "kernels_j", "baseline_j", "error_pct"], cons)
    write_csv(os.path.join(outdir, "additivity.csv"),
              ["pattern", "whole_from", "whole_above_baseline_j", "solo_sum_j", "solo_excess_pct"], additive)
    write_csv(os.path.join(outdir, "solo.csv"),
              ["pattern", "name", "launches", "start_s", "end_s", "counter_j", "baseline_before_w", "baseline_after_w",
               "baseline_j", "above_baseline_j", "uncertainty_j", "solo_j", "full_gpu_lag_mean_s", "solo_gpu_lag_mean_s",
               "note"], solo_rows)
    write_csv(os.path.join(outdir, "naive.csv"),
              ["pattern", "name", "launches", "solo_j", "estimate_j", "estimate_error_pct", "timeshare_j",
               "timeshare_error_pct", "instant_j", "instant_error_pct"], naive_rows)
    write_csv(os.path.join(outdir, "steady.csv"),
              ["name", "steady_j", "window_s", "above_baseline_j", "baseline_before_w", "baseline_after_w", "note"],
              [[n, v[0], (v[1].get("end_s", 0) - v[1].get("start_s", 0)), v[1].get("energy_j"),
                v[1].get("baseline_before_w"), v[1].get("baseline_after_w"), v[1].get("note", "")]
               for n, v in sorted(steady.items())])

    print("per-launch energy above the baseline, J (error: against solo; solo_unc: the reference's own\n"
          "uncertainty, solo.csv; 2sd: whether solo lies within the estimate +- 2 sd, or below a below-resolution\n"
          "bound; '<=': held at the power bound, the bound x its time, no interval; tshare, instant: the naive\n"
          "methods' errors, naive.csv)")
    print("%-8s %-22s %6s %9s %10s %10s %9s %10s %9s %7s %5s %9s %9s" % (
        "pattern", "name", "launch", "dur_ms", "steady_j", "solo_j", "solo_unc", "estimate_j", "sd_j", "err_%", "2sd",
        "tshare_%", "instant_%"))
    for p, name, r, ts, inst in table:
        L = r["launches"]
        e = r["est"]
        if r["status"] == "below_resolution":
            etxt = "<%s" % f6((r["upper"] or 0) / L)
        elif r["status"] == "at_power_bound":
            etxt = "<=%s" % f6(e)
        elif r["status"] == "grouped":
            etxt = "grp %s" % r["group"]
        else:
            etxt = f6(e) or r["status"]
        tsp = pct(ts.get(name, 0) / L, r["solo"]) if ts else None
        inp = pct(inst.get(name, 0) / L, r["solo"]) if inst else None
        print("%-8s %-22s %6d %9.4f %10s %10s %9s %10s %9s %7s %5s %9s %9s" % (
            p, name[:22], L, r["dur"] * 1e3, f6(r["steady"]), f6(r["solo"]), f6(r["solo_unc"]), etxt, f6(r["sd"]),
            p1(pct(e, r["solo"])), covers(r), p1(tsp), p1(inp)))
    loo_rows = [(p, name, r) for p, name, r, _, _ in table if r.get("loo") is not None]
    if loo_rows:
        print("\nleave-one-out (TW_ATTRIB_LOO=1): loo_j, what the name adds to the full pattern (ref.P less loo.P.NAME),\n"
              "per launch; speed: how much faster it ran in the full pattern than solo")
        print("%-8s %-22s %10s %10s %9s %10s %8s %8s %8s" % (
            "pattern", "name", "solo_j", "loo_j", "loo_unc", "estimate_j", "err_%", "loo_e_%", "speed_%"))
        for p, name, r in loo_rows:
            print("%-8s %-22s %10s %10s %9s %10s %8s %8s %8s" % (
                p, name[:22], f6(r["solo"]), f6(r["loo"]), f6(r["loo_unc"]), f6(r["est"]), p1(pct(r["est"], r["solo"])),
                p1(pct(r["est"], r["loo"])), p1(speed_vs_solo(r["dur"], r["solo_dur"]))))
    print("\nadditivity: the solo references' sum against the whole pattern's energy above its quiet level,\n"
          "both from the counter (additivity.csv; where they add up to more, a conserving estimate falls short)")
    print("%-8s %12s %12s %8s  %s" % ("pattern", "whole_j", "solo_sum_j", "excess_%", "whole from"))
    for p, src, f, ssum, e in additive:
        print("%-8s %12s %12s %8s  %s" % (p, f6(f), f6(ssum), p1(e), src))
    print("\nconservation (kernels_j includes copies and memsets)")
    print("%-8s %12s %12s %12s %8s" % ("pattern", "counter_j", "kernels_j", "baseline_j", "err_%"))
    for p, c, k, b, e in cons:
        print("%-8s %12s %12s %12s %8s" % (p, f6(c), f6(k), f6(b), "%.2f" % e if e is not None else ""))


# ---------------------------------------------------------------- torch
STATUS_MARK = {"ok": "ok", "below_resolution": "<", "at_power_bound": "<=", "grouped": "grp", "-": "-"}


def report_units(dev):
    """What the report gives an energy of its own: each kernel name that is not in a group, and
    each group (the names the data cannot tell apart). [{label, members (frozenset), energy_j,
    time_s, status}]; a name in a group has no energy of its own, so ranking names alone leaves
    out the program's largest parts (an empty table when every kernel is grouped)."""
    units = []
    for n, v in report_names(dev).items():
        if v.get("kind", "kernel") == "kernel" and v.get("group") is None and v.get("energy_j") is not None:
            units.append({"label": n, "members": frozenset([n]), "energy_j": v["energy_j"],
                          "time_s": v.get("time_s"), "status": v.get("status", "ok")})
    for g in report_groups(dev).values():
        members = g.get("names")
        if not isinstance(members, list) or g.get("energy_j") is None:
            continue
        units.append({"label": g.get("label") or "group %s" % g.get("id"), "members": frozenset(members),
                      "energy_j": g["energy_j"], "time_s": g.get("time_s"), "status": g.get("status", "ok")})
    return units


def same_parts(unit, units):
    """The energy of unit's names in another run: the sum of that run's units that lie inside
    unit's names, where they make up exactly those names; else None and why (a group there that
    holds other names too, or names it does not report)."""
    inside = [u for u in units if u["members"] <= unit["members"]]
    covered = frozenset().union(*[u["members"] for u in inside]) if inside else frozenset()
    if covered == unit["members"]:
        statuses = sorted({u["status"] for u in inside})
        return sum(u["energy_j"] for u in inside), ",".join(statuses), ""
    straddle = [u for u in units if u["members"] & unit["members"] and not u["members"] <= unit["members"]]
    why = ("split differently (%d of its %d names in groups with other names)" %
           (len(frozenset().union(*[u["members"] for u in straddle]) & unit["members"]), len(unit["members"]))
           if straddle else "%d of its %d names absent" % (len(unit["members"] - covered), len(unit["members"])))
    return None, "-", why


def repeat_rows(d1, d2, top_n=10):
    """The run-twice table: the top_n of run 1's units by energy, each against the same names in
    run 2. [{unit, e1, e2, diff_pct, st2, why, w}] (e2 None where run 2 split the names
    differently: why says how)."""
    u2 = report_units(d2)
    rows = []
    for u in sorted(report_units(d1), key=lambda u: -u["energy_j"])[:top_n]:
        e2, st2, why = same_parts(u, u2)
        rows.append({"unit": u, "e1": u["energy_j"], "e2": e2, "diff_pct": pct(e2, u["energy_j"]), "st2": st2,
                     "why": why, "w": u["energy_j"] / u["time_s"] if u.get("time_s") else None})
    return rows


def unit_of(name, units):
    return next((u for u in units if name in u["members"]), None)


def cmd_torch(raw, outdir):
    d1, _ = device_and_prefix(raw, "torch.run1")
    d2, _ = device_and_prefix(raw, "torch.run2")
    u1 = report_units(d1)
    rep_rows = []
    print("PyTorch step, two runs: the top 10 of what the report gives an energy (names, and groups of\n"
          "names the data cannot tell apart) by energy in run 1, against the same names in run 2 (status:\n"
          "ok resolved, < below resolution, <= at the power bound, - not comparable: the note says why)")
    print("%-60s %5s %10s %10s %7s %8s %4s %4s  %s" % ("name or group", "names", "run1_j", "run2_j", "diff_%",
                                                       "run1_w", "st1", "st2", "note"))
    for r in repeat_rows(d1, d2):
        u = r["unit"]
        rep_rows.append([u["label"], len(u["members"]), r["e1"], r["e2"], r["diff_pct"], u["status"], r["st2"], r["why"]])
        print("%-60s %5d %10s %10s %7s %8s %4s %4s  %s" % (
            u["label"][:60], len(u["members"]), f6(r["e1"]), f6(r["e2"]), p1(r["diff_pct"]), f6(r["w"]),
            STATUS_MARK.get(u["status"], u["status"]), ",".join(STATUS_MARK.get(s, s) for s in r["st2"].split(",")),
            r["why"]))
    write_csv(os.path.join(outdir, "torch_repeat.csv"),
              ["name", "names", "run1_j", "run2_j", "diff_pct", "run1_status", "run2_status", "note"], rep_rows)

    stem = "torch.steady"
    wins, ks = mix_lines(os.path.join(raw, stem + ".stderr.txt"))
    tr = trace_for(raw, stem, prefix_of(raw, stem))
    evs = read_events(raw, stem)
    rows = []
    print("\nPyTorch operators: steady power above the baseline against the full run's estimate (of the\n"
          "op's kernels' names, or of the groups that hold them: the note says so)")
    print("%-10s %6s %9s %9s %9s %7s  %s" % ("op", "calls", "steady_w", "j_call", "est_w", "err_%", "kernels"))
    for win in wins:
        op = win.get("only", "?")
        ref = window_energy(tr, win, stem + " " + op)
        s, e = ref["start_s"], ref["end_s"]
        busy = {}
        for a, b, n in evs:
            if s <= a and b <= e:
                busy[n] = busy.get(n, 0) + (b - a)
        tot = sum(busy.values())
        mine = sorted((n for n in busy if busy[n] >= 0.05 * tot), key=lambda n: -busy[n])
        calls = sum(int(num(k, "launches", stem)) for k in ks if k.get("name") == op)
        steady_w = ref["energy_j"] / tot if ref["energy_j"] is not None and tot else None
        per_call = ref["energy_j"] / calls if ref["energy_j"] is not None and calls else None
        units = {id(u): u for u in (unit_of(n, u1) for n in mine) if u is not None}.values()
        est_e = sum(u["energy_j"] for u in units)
        est_t = sum(u["time_s"] or 0 for u in units)
        est_w = est_e / est_t if est_t else None
        err = pct(est_w, steady_w)
        others = sum(len(u["members"]) for u in units) - len([n for n in mine if unit_of(n, u1)])
        why = ("the estimate is of %d name(s) with %d other(s) grouped with them" % (len(mine), others) if others
               else "" if units else "its kernels are not in run 1's report")
        note = "; ".join(x for x in (ref.get("note", ""), why) if x)
        rows.append([op, " | ".join(mine), calls, steady_w, per_call, est_w, err, note])
        print("%-10s %6d %9s %9s %9s %7s  %s%s" % (op, calls, f6(steady_w), f6(per_call), f6(est_w),
                                                   p1(err), " | ".join(mine)[:80], "  (%s)" % note if note else ""))
    write_csv(os.path.join(outdir, "torch_steady.csv"),
              ["op", "kernels", "calls", "steady_w", "steady_j_per_call", "estimate_w", "error_pct", "note"], rows)


def main(argv):
    if len(argv) != 4 or argv[1] not in ("mix", "torch"):
        sys.exit(__doc__)
    raw, outdir = argv[2], argv[3]
    os.makedirs(outdir, exist_ok=True)
    (cmd_mix if argv[1] == "mix" else cmd_torch)(raw, outdir)


if __name__ == "__main__":
    main(sys.argv)
