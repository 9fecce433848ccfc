#!/usr/bin/env python3
"""The Python API on a GPU (scripts/gpu-api): its parts, each against an
independent reference taken in the same process.

  window   R windows, each around one PyTorch training step (a small
           transformer block, a few hundred ms) with quiet stretches before
           and after it, its edges on the ends of two of the NVML energy
           counter's windows (read here with pynvml, its own library: an
           update at u publishes the energy up to u - delay, the delay and
           period from the GPU's sensor profile; the edge is put at the next
           update's u + period - delay): the window's energy against the
           counter's difference between the two updates that publish those
           ends, each update's value taken from the log of every counter
           read by time (counter_at_edge), not as "the next change seen".
           Each window is also an NVTX range of the same name, so `truewatt
           run` around this program gives a third number. Writes window.csv
           and the counter log window.counter.csv.
  check    offline, from a results folder (--dir): each window against the
           counter's difference recomputed from window.counter.csv and
           against `truewatt run`'s range (window.run.json), within 1 %;
           prints window.check.txt's lines (scripts/gpu-api runs it).
  selftest counter_at_edge on a simulated counter (no GPU).
  measure  truewatt.measure of a ~100 us operator (a bf16 matrix product
           sized here, then torch.cuda.synchronize(): the callable) against
           the same callable back to back for >= 4 s, the energy per call
           from the counter's difference over the calls between two of its
           updates (a thread reads the counter meanwhile). Writes measure.csv.
  cost     begin_window + end_window pairs in Python: us per pair. Writes cost.csv.
  torch    truewatt.torch on a small MLP: the forward and backward windows
           inside the training step's, in order, energies consistent.
           Writes torch.csv (no --dry).

--dry: no GPU, no torch, no pynvml: the fake libnvidia-ml ($TW_NVML_LIBRARY)
through a ctypes stand-in for pynvml's three calls, CPU work instead of the
GPU's, and the NVTX ranges written as truewatt's injection library would
($TW_EVENTS_PATH): checks this program's logic on any machine.

  python3 scripts/gpu/api_check.py window|measure|cost|torch --out FILE [--dry] [options]
  python3 scripts/gpu/api_check.py check --dir RESULTS_DIR
  python3 scripts/gpu/api_check.py selftest
"""
from __future__ import annotations

import argparse
import math
import ctypes
import csv
import os
import statistics
import sys
import threading
import time
from typing import Optional


truewatt = None  # the package, imported by main() for the parts that measure


def log(msg: str) -> None:
    print(f"api_check: {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------- the energy counter (independent of truewatt)


class Counter:
    """NVML's total energy counter of one GPU, in J (pynvml; --dry: ctypes on the fake)."""

    def __init__(self, dry: bool, uuid: str) -> None:
        self.dry = dry
        self.log: Optional[list] = None  # (start s, end s, value J) of every read, when a list
        if dry:
            lib = ctypes.CDLL(os.environ["TW_NVML_LIBRARY"])
            assert lib.nvmlInit_v2() == 0
            self._h = ctypes.c_void_p()
            assert lib.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(self._h)) == 0
            self._lib = lib
        else:
            import pynvml

            pynvml.nvmlInit()
            self._nv = pynvml
            try:  # the monitor's GPU ("cuda:0"); nvidia-ml-py versions take str or bytes
                self._h = pynvml.nvmlDeviceGetHandleByUUID(uuid)
            except (TypeError, AttributeError):
                self._h = pynvml.nvmlDeviceGetHandleByUUID(uuid.encode())

    def read_j(self) -> float:
        """One read (J); with logging on, its start, end and value go into self.log."""
        t = time.monotonic()
        if self.dry:
            mj = ctypes.c_ulonglong()
            assert self._lib.nvmlDeviceGetTotalEnergyConsumption(self._h, ctypes.byref(mj)) == 0
            v = mj.value / 1e3
        else:
            v = self._nv.nvmlDeviceGetTotalEnergyConsumption(self._h) / 1e3
        if self.log is not None:
            self.log.append((t, time.monotonic(), v))
        return v

    def calibrate(self) -> float:
        """The median time of one read (s); the widest an update's detection may be is a few reads."""
        times = []
        for _ in range(15):
            t = time.monotonic()
            self.read_j()
            times.append(time.monotonic() - t)
        return statistics.median(times)

    def next_update(self, max_width_s: float) -> tuple:
        """Polls until the counter changes, and returns (value J, monotonic s of the detection, width s).

        The update happened after the previous read began and before the detecting read ended: the
        width of that interval bounds how far the detection lags the update. An update seen over a
        wider interval (the thread was descheduled) is not used: the next one is awaited instead.
        """
        t_prev = time.monotonic()
        last = self.read_j()
        while True:
            t_start = time.monotonic()
            v = self.read_j()
            t = time.monotonic()
            if v != last:
                if t - t_prev <= max_width_s:
                    return v, t, t - t_prev
                last = v
            t_prev = t_start


# ---------------------------------------------------------------- the work: PyTorch, or CPU for --dry


class Nvtx:
    """NVTX ranges: torch's, or (--dry) written as the injection library writes them."""

    def __init__(self, dry: bool) -> None:
        self.dry = dry
        self.rows: list = []
        self._open: dict = {}
        if not dry:
            import torch

            self._nvtx = torch.cuda.nvtx

    def push(self, name: str) -> None:
        if self.dry:
            self._open[name] = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        else:
            self._nvtx.range_push(name)

    def pop(self, name: str) -> None:
        if self.dry:
            self.rows.append((name, self._open.pop(name), time.clock_gettime_ns(time.CLOCK_MONOTONIC)))
        else:
            self._nvtx.range_pop()

    def flush(self) -> None:
        path, t0 = os.environ.get("TW_EVENTS_PATH"), os.environ.get("TW_T0_MONO_NS")
        if not (self.dry and path and t0):
            return
        with open(path, "w") as f:
            f.write("name,start_s,end_s,device,stream,kind,grid_x,correlation_id\n")
            for i, (name, a, b) in enumerate(self.rows):
                f.write(f"{name},{(a - int(t0)) / 1e9:.9f},{(b - int(t0)) / 1e9:.9f},,,nvtx,,{i + 1}\n")


def busy(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def training_step(dry: bool, target_s: float):
    """A function that runs one training step of ~target_s and waits for the GPU."""
    if dry:
        return lambda: busy(target_s)
    import torch
    import torch.nn as nn

    torch.manual_seed(0)
    dev = torch.device("cuda")
    d, heads, seq, batch = 1024, 16, 512, 16
    block = nn.TransformerEncoderLayer(d, heads, 4 * d, batch_first=True, dropout=0.0).to(dev)
    opt = torch.optim.AdamW(block.parameters(), lr=1e-4)
    x = torch.randn(batch, seq, d, device=dev)

    def micro() -> None:
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = block(x).float().pow(2).mean()
        loss.backward()

    def step_of(k: int):
        def step() -> None:
            for _ in range(k):
                micro()
            opt.step()
            opt.zero_grad(set_to_none=True)
            torch.cuda.synchronize()

        return step

    one = step_of(1)
    for _ in range(3):
        one()  # warm-up: kernels chosen, memory allocated
    t = time.perf_counter()
    for _ in range(5):
        one()
    per = (time.perf_counter() - t) / 5
    k = max(1, round(target_s / per))
    log(f"training step: a transformer block (d {d}, seq {seq}, batch {batch}), {k} micro-batches "
        f"of {per * 1e3:.1f} ms: ~{k * per * 1e3:.0f} ms a step")
    return step_of(k)


# ---------------------------------------------------------------- (a) windows around training steps


def monitor_and_counter(dry: bool, counter_period_s: float = 0.0, run_path: Optional[str] = None):
    """The monitor on the GPU torch calls cuda:0, and that GPU's counter by its UUID; the monitor
    records into run_path when given."""
    mon = truewatt.Monitor(gpus=None if dry else ["cuda:0"], counter_period_s=counter_period_s or None,
                           run_path=run_path)
    uuid = mon.devices[0].uuid
    if not dry:
        import torch

        log(f"cuda:0 is {uuid} (torch: {torch.cuda.get_device_properties(0).uuid})")
    return mon, Counter(dry, uuid)


def counter_model(path: str) -> tuple:
    """The energy counter's update period and delay (s) from a sensor profile (truewatt sensor identify)."""
    import json

    for r in json.load(open(path))["readings"]:
        if r["name"] == "energy_j":
            return float(r["period_s"]), float(r["delay_s"])
    raise SystemExit(f"api_check: {path}: no energy_j reading")


# the counter's updates come on the profile's period; how far one may stray from it between the update
# that placed an edge and the next one (beyond the detection's own half-width)
PHASE_MARGIN_S = 0.001


def on_boundary(counter: Counter, width: float, period_s: float, delay_s: float) -> float:
    """Returns at the end of a counter window (the caller puts its edge there), with how well that
    end is known (s).

    The counter publishes at each update u the energy up to u - delay (its profile's delay). An update
    is seen between the previous read's start and the detecting read's end (Counter.next_update); its
    time is the middle of that interval, known to half its width. The next update comes one period
    later and covers the energy up to u + period - delay: the edge."""
    _, t, w = counter.next_update(width)
    u = t - w / 2
    edge = u + period_s - delay_s
    while time.monotonic() < edge:
        pass  # spin: a sleep could wake late by a scheduler tick
    return w / 2 + PHASE_MARGIN_S


def await_publication(counter: Counter, edge: float, delay_s: float, tol_s: float) -> None:
    """Reads the counter (into its log) from now, just after the edge, until reads have begun 5 ms
    past the update that publishes the energy up to the edge (at edge + delay, within tol_s): the
    log then holds reads on both sides of that update, which counter_at_edge takes its value from
    and checks its place with. How long any read takes does not matter: the value is taken from the
    log by time, not as "the next change seen"."""
    u = edge + delay_s
    while True:
        t = time.monotonic()
        counter.read_j()
        if t >= u + tol_s + 0.005:
            return


class NoReference(Exception):
    """The counter's log does not show the update that publishes an edge where the model puts it."""


def counter_at_edge(reads: list, edge: float, period_s: float, delay_s: float, tol_s: float) -> tuple:
    """The counter's value for the energy up to `edge`, from a log of reads (start s, end s, value J).

    The update at U = edge + delay publishes it (U known within tol_s). The counter changes only at its
    updates, one a period apart, so every read lying wholly in (U + tol, U + period - tol) returns that
    update's value, however long the poll that first saw it took, and every read lying wholly in
    (U - period + tol, U - tol) the previous update's. Taking "the first change seen after the edge"
    instead is wrong whenever that change is not U's: a read that took longer than usual (the old
    reference skipped such a detection and took the update one or more periods later), or a first read
    that already saw U. Both sets must be non-empty, each hold one value, and differ: otherwise the
    update is not where the model puts it, and NoReference says why.

    Returns (value J, mean power over the period ending at the edge W: the reference's resolution at
    this edge is that power times tol_s)."""
    u = edge + delay_s
    before = {v for a, b, v in reads if a >= u - period_s + tol_s and b <= u - tol_s}
    after = {v for a, b, v in reads if a >= u + tol_s and b <= u + period_s - tol_s}
    where = f"edge {edge:.4f} s: the update at {u:.4f} s +- {tol_s * 1e3:.1f} ms"
    if not before or not after:
        raise NoReference(f"{where}: no read wholly {'before' if not before else 'after'} it")
    if len(before) > 1 or len(after) > 1:
        raise NoReference(f"{where}: the counter changed away from it (before: {sorted(before)} J, after: "
                          f"{sorted(after)} J): its phase is not the model's")
    (v0,), (v1,) = before, after
    if not v1 > v0:
        raise NoReference(f"{where}: the counter did not rise across it ({v0:.3f} -> {v1:.3f} J)")
    return v1, (v1 - v0) / period_s


WINDOW_COLUMNS = ["name", "nvml_index", "uuid", "time_s", "window_j", "window_sd_j", "baseline_j", "above_baseline_j",
                  "counter_j", "counter_res_j", "window_vs_counter_pct", "begin_s", "end_s", "begin_tol_ms",
                  "end_tol_ms", "counter_period_s", "counter_delay_s", "reading"]


def window_reference(row: dict, reads: list) -> tuple:
    """A window's counter reference from window.csv's row (its edges on CLOCK_MONOTONIC, their
    tolerances, the counter's period and delay) and the counter log: (J, resolution J)."""
    period, delay = float(row["counter_period_s"]), float(row["counter_delay_s"])
    ends = []
    for side in ("begin", "end"):
        tol = float(row[f"{side}_tol_ms"]) / 1e3
        v, p = counter_at_edge(reads, float(row[f"{side}_s"]), period, delay, tol)
        ends.append((v, p * tol))
    (c0, r0), (c1, r1) = ends
    return c1 - c0, r0 + r1


def read_csv(path: str) -> list:
    """Rows of a CSV, its '#' lines (provenance) skipped."""
    with open(path, newline="") as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def write_counter_log(path: str, reads: list) -> None:
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["start_s", "end_s", "counter_j"])  # CLOCK_MONOTONIC s; the counter is in mJ
        w.writerows((f"{a:.6f}", f"{b:.6f}", f"{v:.3f}") for a, b, v in reads)


def read_counter_log(path: str) -> list:
    return [(float(r["start_s"]), float(r["end_s"]), float(r["counter_j"])) for r in read_csv(path)]


def part_window(args) -> int:
    nvtx = Nvtx(args.dry)
    step = training_step(args.dry, args.step_s)
    mon, counter = monitor_and_counter(args.dry, args.counter_period_s)
    log(f"monitor: {mon.devices[0].name} {mon.devices[0].uuid}, backend {mon.backend}")
    period_s, delay_s = counter_model(args.profile)
    log(f"counter: every {period_s * 1e3:.3f} ms, delay {delay_s * 1e3:.2f} ms ({args.profile})")
    warm = time.monotonic() + args.warm_s
    while time.monotonic() < warm:  # the monitor learns when the counter updates
        step()
        time.sleep(0.1)
    read_s = counter.calibrate()
    width = max(3 * read_s, 0.002)
    log(f"counter: a read takes {read_s * 1e3:.2f} ms; edges placed on updates detected within {width * 1e3:.2f} ms")
    counter.log = []  # every read from here: the reference is taken from it (and again offline: `check`)
    spans = []
    for r in range(args.reps):
        name = f"api_step_{r}"
        time.sleep(args.idle_s)  # quiet before the window: its begin edge on the baseline
        tol0 = on_boundary(counter, width, period_s, delay_s)  # the begin on the end of a counter window
        t0 = time.monotonic()
        mon.begin_window(name)
        nvtx.push(name)
        await_publication(counter, t0, delay_s, tol0)
        for _ in range(args.steps):
            step()
        time.sleep(args.margin_s)  # quiet after the work: the GPU's tail decays, the end edge on the baseline
        tol1 = on_boundary(counter, width, period_s, delay_s)
        nvtx.pop(name)
        t1 = time.monotonic()
        m = mon.end_window(name)
        await_publication(counter, t1, delay_s, tol1)
        spans.append((name, m, t0, t1, tol0, tol1))
    nvtx.flush()
    write_counter_log(args.counter_log, counter.log)
    dev = mon.devices[0]
    rows = []
    for name, m, t0, t1, tol0, tol1 in spans:
        rows.append({"name": name, "nvml_index": dev.index, "uuid": dev.uuid, "time_s": f"{m.time_s:.6f}",
                     "window_j": f"{m.energy_j[0]:.4f}", "window_sd_j": f"{m.energy_sd_j[0]:.4f}",
                     "baseline_j": f"{m.baseline_j[0]:.4f}", "above_baseline_j": f"{m.above_baseline_j[0]:.4f}",
                     "begin_s": f"{t0:.6f}", "end_s": f"{t1:.6f}", "begin_tol_ms": f"{tol0 * 1e3:.3f}",
                     "end_tol_ms": f"{tol1 * 1e3:.3f}", "counter_period_s": f"{period_s:.6f}",
                     "counter_delay_s": f"{delay_s:.6f}", "reading": m.reading[0]})
    mon.close()
    reads = read_counter_log(args.counter_log)  # the log as written: the numbers `check` recomputes
    for row in rows:
        try:
            cj, res = window_reference(row, reads)
            row.update(counter_j=f"{cj:.4f}", counter_res_j=f"{res:.4f}",
                       window_vs_counter_pct=f"{100 * (float(row['window_j']) / cj - 1):+.3f}")
            log(f"{row['name']}: {float(row['time_s']):.3f} s, window {float(row['window_j']):.2f} J "
                f"+- {float(row['window_sd_j']):.2f}, counter {cj:.2f} J +- {res:.2f} "
                f"({100 * (float(row['window_j']) / cj - 1):+.2f} %)")
        except NoReference as e:
            row.update(counter_j="", counter_res_j="", window_vs_counter_pct="")
            log(f"{row['name']}: no counter reference: {e}")
    with open(args.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=WINDOW_COLUMNS)
        w.writeheader()
        w.writerows(rows)
    return 0


def part_check(args) -> int:
    """Each window (DIR/window.csv) against the counter's difference, recomputed from the counter log
    (DIR/window.counter.csv), and against `truewatt run`'s energy for the NVTX range of its name
    (DIR/window.run.json): a line each, ending in '<- ...' where it is not within --tolerance-pct.
    Needs nothing but those files: it runs offline. Exit status 0 when every window passes."""
    import json

    d = args.dir
    rows = read_csv(os.path.join(d, "window.csv"))
    report = json.load(open(os.path.join(d, "window.run.json")))
    log_path = os.path.join(d, "window.counter.csv")
    reads = None
    if not os.path.exists(log_path):
        log(f"{log_path}: missing (the counter's reads were not saved): its difference cannot be recomputed")
    elif not rows or "begin_s" not in rows[0]:
        log(f"{d}/window.csv: no begin_s column (the windows' edges): the counter's difference cannot be recomputed")
    else:
        reads = read_counter_log(log_path)
    ok = bool(rows)
    tol = args.tolerance_pct
    for r in rows:
        w = float(r["window_j"])
        line = f"{r['name']}: {float(r['time_s']):.3f} s, window {w:.2f} J +- {float(r['window_sd_j']):.2f}"
        bad = []
        if reads is None:
            line += ", counter: not recomputable (no counter log)"
            bad.append("no counter reference")
        else:
            try:
                c, res = window_reference(r, reads)
                dc = 100 * (w / c - 1)
                line += f", counter {c:.2f} J +- {res:.2f} ({dc:+.2f} %)"
                if abs(dc) > tol:
                    bad.append(f"over {tol:g} % from the counter")
            except NoReference as e:
                line += f", counter: no reference ({e})"
                bad.append("no counter reference")
        dev = next((x for x in report["devices"] if x["index"] == int(r["nvml_index"])), {})
        ranges = [x for x in dev.get("nvtx_ranges", []) if x["name"] == r["name"]]
        if len(ranges) != 1 or ranges[0]["energy_j"] is None:
            line += ", truewatt run: no single NVTX range of that name"
            bad.append("no single NVTX range")
        else:
            x = ranges[0]["energy_j"]
            dx = 100 * (w / x - 1)
            line += f", truewatt run's range {x:.2f} J ({dx:+.2f} %)"
            if abs(dx) > tol:
                bad.append(f"over {tol:g} % from truewatt run")
        ok &= not bad
        print(line + (f"  <- {'; '.join(bad)}" if bad else ""))
    return 0 if ok else 1


def part_selftest(args) -> int:
    """counter_at_edge on a simulated H100 counter, against the energy computed here: updates every
    100 ms at a phase of 12.3 ms, each publishing the energy up to 13.6 ms before it; 125 W, 400 W from
    1.0 to 1.3 s; reads of 2.7 ms back to back, the value latched at a read's end. The read that sees
    the end edge's update takes 12 ms (a poll descheduled, or the driver busy): "the first change seen
    within 3 reads' time" (the reference before counter_at_edge) then takes the next update's value.
    Also: an edge 20 ms off the grid, and no read for 150 ms after an update, give NoReference."""
    import math

    period, delay, phase = 0.1, 0.0136, 0.0123

    def energy(t: float) -> float:
        return 125 * t + 275 * max(0.0, min(t, 1.3) - 1.0)

    def value(t: float) -> float:
        u = phase + math.floor((t - phase) / period) * period
        return round(energy(u - delay), 3)

    begin, end = phase + 8 * period - delay, phase + 16 * period - delay

    def reads_of(slow_at: float, gap_at: float = -1.0) -> list:
        out, t = [], 0.5
        while t < 2.5:
            d = 0.012 if slow_at - 0.0027 <= t < slow_at else 0.0027  # the read under way at slow_at
            if gap_at - 0.0027 <= t < gap_at:
                t += 0.15  # nothing read for 150 ms
            out.append((t, t + d, value(t + d)))
            t += d
        return out

    ok = True
    tol = 0.0027 + PHASE_MARGIN_S  # a detection of two reads' width: half of it, and the margin
    reads = reads_of(end + delay)
    want = energy(end) - energy(begin)
    got = counter_at_edge(reads, end, period, delay, tol)[0] - counter_at_edge(reads, begin, period, delay, tol)[0]

    def first_change(t0: float) -> float:  # the old reference: the first change seen within 8.1 ms
        prev = next(r for r in reads if r[0] >= t0)
        for r in reads[reads.index(prev) + 1:]:
            if r[2] != prev[2] and r[1] - prev[0] <= 0.0081:
                return r[2]
            prev = r
        raise AssertionError("no change")

    old = first_change(end) - first_change(begin)
    log(f"selftest: the counter over [{begin:.4f}, {end:.4f}] s: {want:.3f} J; counter_at_edge {got:.3f} J; "
        f"the first change seen {old:.3f} J")
    ok &= abs(got - want) < 0.002 and abs(old - want) > 10  # the case must show the old reference's error
    for what, reads, edge in (("an edge 20 ms off the grid", reads, end + 0.02),
                              ("no read for 150 ms after the update", reads_of(-1, end + delay + 0.005), end)):
        try:
            counter_at_edge(reads, edge, period, delay, tol)
            log(f"selftest: {what}: a reference (wrong: it has none)")
            ok = False
        except NoReference as e:
            log(f"selftest: {what}: no reference ({e})")
    log(f"selftest: {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


# ---------------------------------------------------------------- (b) measure of a ~100 us operator


def operator(dry: bool, target_s: float):
    """The callable: one ~target_s operator and a synchronize; and its GPU time alone."""
    if dry:
        return (lambda: busy(target_s)), target_s, "busy loop (dry)"
    import torch

    dev = torch.device("cuda")
    n = 1024
    while True:  # the bf16 product whose GPU time is nearest target_s
        a = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
        for _ in range(20):
            a @ a
        torch.cuda.synchronize()
        ev = [torch.cuda.Event(enable_timing=True) for _ in range(2)]
        ev[0].record()
        for _ in range(200):
            a @ a
        ev[1].record()
        torch.cuda.synchronize()
        gpu_s = ev[0].elapsed_time(ev[1]) / 1e3 / 200
        if gpu_s >= target_s or n >= 16384:
            break
        n += 256
    out = torch.empty_like(a)

    def op() -> None:
        torch.matmul(a, a, out=out)
        torch.cuda.synchronize()

    return op, gpu_s, f"torch.matmul bf16 {n}x{n} + synchronize"


class CounterThread(threading.Thread):
    """Reads the counter continuously; at each update, the number of calls made so far and the width
    of the interval the update is known to lie in (Counter.next_update)."""

    def __init__(self, counter: Counter, calls: list) -> None:
        super().__init__(daemon=True)
        self.counter, self.calls = counter, calls
        self.updates: list = []  # (time, counter J, calls, width s)
        self.stop = threading.Event()

    def run(self) -> None:
        t_prev = time.monotonic()
        last = self.counter.read_j()
        while not self.stop.wait(0.001):  # a read each ms at most (an H100's takes ~4 ms): the calls keep the GIL
            t_start = time.monotonic()
            v = self.counter.read_j()
            t = time.monotonic()
            if v != last:
                self.updates.append((t, v, self.calls[0], t - t_prev))
                last = v
            t_prev = t_start


def independent_per_call(run: str, energy_j: float, t_a: float, t_b: float, r) -> tuple:
    """The energy per call of truewatt.measure's calls from the counter alone: its energy over the
    measure's span (two counter updates around it) less the level of the gaps between the blocks
    (the median of the session's buffer samples below the midpoint between idle and busy, more than
    0.1 s from any sample above it) times the span's time outside the calls (calls x time a call),
    over the calls. (J, gap level W); NaN where the run file has no buffer samples."""
    import sqlite3

    db = sqlite3.connect(f"file:{run}?mode=ro", uri=True)
    t0 = float(db.execute("SELECT value FROM meta WHERE key = 't0_mono_ns'").fetchone()[0]) / 1e9
    rows = db.execute("SELECT COALESCE(s.value_t_ns, s.t_ns), s.value FROM samples s JOIN readings r ON r.id = s.reading "
                      "WHERE r.name = 'power_buffer_w' AND s.value IS NOT NULL ORDER BY 1").fetchall()
    pts = [(t0 + t / 1e9, v) for t, v in rows if t_a <= t0 + t / 1e9 <= t_b]
    if len(pts) < 20:
        log(f"independent: {len(pts)} buffer samples in the measure's span: none computed")
        return float("nan"), float("nan")
    vals = sorted(v for _, v in pts)
    mid = (vals[len(vals) // 20] + vals[-len(vals) // 20]) / 2
    high = [t for t, v in pts if v > mid]
    lows = [v for t, v in pts if v <= mid and all(abs(t - h) > 0.1 for h in high)]
    gap_w = statistics.median(lows) if lows else float("nan")
    busy = r.time_s * r.calls
    per_call = (energy_j - gap_w * ((t_b - t_a) - busy)) / r.calls
    log(f"independent: {per_call * 1e3:.4f} mJ a call (the counter: {energy_j:.1f} J over {t_b - t_a:.2f} s, "
        f"less the gaps' level {gap_w:.1f} W x {(t_b - t_a) - busy:.2f} s outside the calls, over {r.calls} calls)")
    return per_call, gap_w


def part_measure(args) -> int:
    op, gpu_s, what = operator(args.dry, args.op_s)
    log(f"operator: {what}: {gpu_s * 1e6:.1f} us of GPU time")
    mon, counter = monitor_and_counter(args.dry, run_path=args.run)
    for _ in range(100):
        op()
    width = max(3 * counter.calibrate() + 0.001, 0.005)
    e_a, t_a, _ = counter.next_update(width)
    r = truewatt.measure(op, precision=args.precision, budget_s=args.budget_s, block_s=args.block_s, monitor=mon)
    e_b, t_b, _ = counter.next_update(width)
    log(f"truewatt.measure: {r.energy_j * 1e3:.4f} mJ +- {r.energy_sd_j * 1e3:.4f} a call, {r.time_s * 1e6:.1f} us, "
        f"{r.calls} calls, {r.power_above_baseline_w:.1f} W above baseline")
    mon.close()
    indep = independent_per_call(args.run, e_b - e_a, t_a, t_b, r) if args.run else (float("nan"), float("nan"))

    # the reference: the same callable back to back for >= ref_s, between two counter updates
    calls = [0]
    # the counter's thread gets the GIL within 0.5 ms of wanting it (a callable that holds the GIL, as
    # --dry's busy loop does, would otherwise delay each read by up to Python's 5 ms switch interval)
    sys.setswitchinterval(0.0005)
    th = CounterThread(counter, calls)
    time.sleep(0.3)
    th.start()
    t_end = time.monotonic() + args.ref_s + 0.5
    while time.monotonic() < t_end:  # the first 0.5 s warms up: its updates are not used
        for _ in range(50):
            op()
            calls[0] += 1
    th.stop.set()
    th.join()
    # updates after the warm-up, seen within `width` of when they happened
    ups = [u for u in th.updates if u[0] >= th.updates[0][0] + 0.5 and u[3] <= width] if th.updates else []
    if len(ups) < 2 or ups[-1][0] - ups[0][0] < args.min_span_s:
        widths = sorted(u[3] * 1e3 for u in th.updates)
        log(f"the counter updated {len(th.updates)} times, {len(ups)} seen within {width * 1e3:.1f} ms after "
            f"the warm-up: too few for the reference (widths {widths[:3]} .. {widths[-3:]} ms)")
        return 1
    (ta, ca, na, _), (tb, cb, nb, _) = ups[0], ups[-1]
    ref_j, ref_s = (cb - ca) / (nb - na), (tb - ta) / (nb - na)
    log(f"reference: {nb - na} calls back to back over {tb - ta:.2f} s: {ref_j * 1e3:.4f} mJ a call, "
        f"{ref_s * 1e6:.1f} us a call")
    with open(args.out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["operator", "gpu_us", "measure_mj", "measure_sd_mj", "measure_us", "measure_calls",
                    "power_above_baseline_w", "reference_mj", "reference_us", "reference_calls", "reference_s",
                    "measure_vs_reference_pct", "independent_mj", "gap_w", "independent_vs_reference_pct"])
        w.writerow([what, f"{gpu_s * 1e6:.2f}", f"{r.energy_j * 1e3:.5f}", f"{r.energy_sd_j * 1e3:.5f}",
                    f"{r.time_s * 1e6:.2f}", r.calls, f"{r.power_above_baseline_w:.2f}", f"{ref_j * 1e3:.5f}",
                    f"{ref_s * 1e6:.2f}", nb - na, f"{tb - ta:.3f}", f"{100 * (r.energy_j / ref_j - 1):+.3f}",
                    f"{indep[0] * 1e3:.5f}", f"{indep[1]:.2f}", f"{100 * (indep[0] / ref_j - 1):+.3f}"])
    return 0


# ---------------------------------------------------------------- (c) the cost of begin + end


def part_cost(args) -> int:
    mon = truewatt.Monitor(gpus=None if args.dry else ["cuda:0"])
    rows = []
    for kind in ("discarded", "kept"):
        per = []
        for _ in range(5):
            kept = []
            t = time.perf_counter()
            for _ in range(args.pairs):
                mon.begin_window("cost")
                m = mon.end_window("cost")
                if kind == "kept":
                    kept.append(m)
            per.append((time.perf_counter() - t) / args.pairs * 1e6)
            del kept
        rows.append((kind, statistics.median(per), min(per)))
        log(f"begin_window + end_window ({kind} Measurement): median {statistics.median(per):.2f} us a pair, "
            f"best {min(per):.2f} us ({args.pairs} pairs x 5)")
    mon.close()
    with open(args.out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["way", "median_us_per_pair", "best_us_per_pair", "pairs"])
        for kind, med, best in rows:
            w.writerow([f"python {kind}", f"{med:.3f}", f"{best:.3f}", args.pairs])
    return 0


# ---------------------------------------------------------------- (d) truewatt.torch's hooks on a real model


def part_torch(args) -> int:
    """instrument() and step() on a small MLP: forward and backward windows inside the step's, in order,
    their energies positive and together at most the step's (the step also holds the optimizer), within
    1 % or 3 of their stated standard uncertainties together."""
    import torch

    import truewatt.torch as twt

    mon = truewatt.Monitor(gpus=["cuda:0"])
    dev = torch.device("cuda")
    model = torch.nn.Sequential(*[torch.nn.Linear(4096, 4096) for _ in range(8)]).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-4)
    x = torch.randn(8192, 4096, device=dev, requires_grad=True)
    marks = twt.instrument(model, mon)
    ok = True
    rows = []
    for i in range(5):
        with twt.step(mon) as s:
            model(x).float().pow(2).mean().backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
        f, b, st = mon.last["forward"], mon.last["backward"], s.measurement
        order = st.start_s <= f.start_s <= f.end_s <= b.start_s <= b.end_s <= st.end_s
        # forward + backward at most the step's, within 1 % or 3 of the three windows' stated standard
        # uncertainties together (a 40 ms window's energy is known to a few % only)
        sd = math.sqrt(f.energy_sd_j[0] ** 2 + b.energy_sd_j[0] ** 2 + st.energy_sd_j[0] ** 2)
        slack = max(0.01 * st.energy_j[0], 3 * sd)
        sizes = 0 < f.energy_j[0] and 0 < b.energy_j[0] and f.energy_j[0] + b.energy_j[0] <= st.energy_j[0] + slack
        ok &= order and sizes
        rows.append((i, st.time_s, st.energy_j[0], f.time_s, f.energy_j[0], b.time_s, b.energy_j[0], order, sizes))
        log(f"step {i}: {st.time_s * 1e3:.1f} ms {st.energy_j[0]:.2f} J; forward {f.time_s * 1e3:.1f} ms "
            f"{f.energy_j[0]:.2f} J; backward {b.time_s * 1e3:.1f} ms {b.energy_j[0]:.2f} J; in order {order}, "
            f"energies consistent {sizes} (forward + backward - step {f.energy_j[0] + b.energy_j[0] - st.energy_j[0]:+.2f} J, "
            f"allowed {slack:.2f} J: 3 sd {3 * sd:.2f} J)")
    marks.remove()
    mon.close()
    with open(args.out, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["step", "step_s", "step_j", "forward_s", "forward_j", "backward_s", "backward_j", "in_order",
                    "energies_consistent"])
        w.writerows(rows)
    return 0 if ok else 1


# ---------------------------------------------------------------- (e) kernel names inside a window (trace_kernels)


def part_kernels(args) -> int:
    """Windows around a training step with Monitor(trace_kernels=True): each window's kernel names,
    with the estimator's energies, add up with the estimator's baseline to the window's
    (counter-anchored) total within --tolerance-pct-kernels (the library scales both to it, so this
    checks the bookkeeping), their sum above 0 and below the total, at least 3 names. Then the
    names' repeatability, which the scaling cannot give: the same step in every window, so each of
    the 3 names with the most energy (median over the windows) must come out within
    --repeat-pct-kernels of its median in every window. PASS or FAIL lines, and kernels.csv (the
    names of every window)."""
    mon = truewatt.Monitor(gpus=None if args.dry else ["cuda:0"], trace_kernels=True,
                           counter_period_s=args.counter_period_s or None)
    step = training_step(args.dry, args.step_s)
    t_end = time.perf_counter() + args.warm_s
    while time.perf_counter() < t_end:
        step()
    ok = True
    rows = []
    for i in range(args.reps):
        busy(args.idle_s) if args.dry else time.sleep(args.idle_s)  # the GPU idles: the baseline
        with mon.window("step") as w:
            step()
        m = w.measurement
        e, model, kern = m.energy_j[0], m.kernels_model_j[0], m.kernels_j[0]
        names = [k for k in m.kernels if k.gpu == mon.devices[0].uuid]
        diff = 100.0 * (model / e - 1.0) if e > 0 else float("nan")
        good = abs(diff) <= args.tolerance_pct_kernels and 0 < kern < e and len(names) >= 3
        if args.dry:  # the fake runs no kernels of this process: nothing to judge
            good = True
        ok &= good
        top = "; ".join(f"{k.name[:60]} {k.launches}x {k.energy_j:.2f} J" for k in names[:3])
        print(f"{'PASS' if good else 'FAIL'} window {i}: {m.time_s * 1e3:.1f} ms, {e:.2f} J; {len(names)} kernel "
              f"names {kern:.2f} J, with the baseline {model:.2f} J ({diff:+.2f} %); largest: {top}")
        for k in names:
            rows.append((i, m.time_s, e, model, k.name, k.launches, k.time_s, k.energy_j, k.energy_sd_j, k.status))
    mon.close()
    per = {}  # name -> energy in each window (NaN where absent or grouped)
    for (i, _, _, _, name, _, _, ej, _, _) in rows:
        per.setdefault(name, [float("nan")] * args.reps)[i] = ej if ej == ej else float("nan")
    full = {n: v for n, v in per.items() if all(x == x for x in v)}
    top = sorted(full, key=lambda n: -statistics.median(full[n]))[:3]
    for n in top:
        med = statistics.median(full[n])
        worst = max(abs(100.0 * (x / med - 1.0)) for x in full[n]) if med > 0 else float("inf")
        good = args.dry or worst <= args.repeat_pct_kernels
        ok &= good
        print(f"{'PASS' if good else 'FAIL'} repeat {n[:60]}: median {med:.2f} J over {args.reps} windows, "
              f"worst {worst:.1f} % off (tolerance {args.repeat_pct_kernels:g} %): "
              + ", ".join(f"{x:.2f}" for x in full[n]))
    if len(top) < 3 and not args.dry:
        ok = False
        print(f"FAIL repeat: {len(top)} names with an energy in every window (3 wanted)")
    with open(args.out, "w", newline="") as fh:
        wr = csv.writer(fh)
        wr.writerow(["window", "window_s", "window_j", "kernels_with_baseline_j", "name", "launches", "time_s",
                     "energy_j", "energy_sd_j", "status"])
        wr.writerows(rows)
    return 0 if ok else 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("part", choices=["window", "check", "selftest", "measure", "cost", "torch", "kernels"])
    ap.add_argument("--out", help="the part's CSV (all parts but check)")
    ap.add_argument("--counter-log", help="window: where the counter's reads go (default: window.counter.csv "
                    "beside --out)")
    ap.add_argument("--dir", help="check: a results folder (window.csv, window.counter.csv, window.run.json)")
    ap.add_argument("--tolerance-pct", type=float, default=1.0,
                    help="check: a window's largest difference from each reference (1 %%, issue 17)")
    ap.add_argument("--dry", action="store_true", help="no GPU: the fake libnvidia-ml and CPU work")
    ap.add_argument("--reps", type=int, default=10, help="window: windows (10)")
    ap.add_argument("--steps", type=int, default=1, help="window: training steps in a window (1)")
    ap.add_argument("--step-s", type=float, default=0.3, help="window: a training step's length (0.3 s)")
    ap.add_argument("--margin-s", type=float, default=0.3,
                    help="window: idle after the work, before the window's end (0.3 s: the GPU's tail decays)")
    ap.add_argument("--idle-s", type=float, default=0.3, help="window: idle before each window (0.3 s)")
    ap.add_argument("--warm-s", type=float, default=5.0,
                    help="window: training steps with the monitor open before the first window (5 s: it learns "
                    "when the counter updates)")
    ap.add_argument("--counter-period-s", type=float, default=0.0975,
                    help="window: the monitor's counter_period_s (0.0975; 0: the library's default)")
    ap.add_argument("--profile", default=os.path.join(os.path.dirname(__file__), "..", "..", "data", "profiles",
                                                       "nvidia-h100-80gb-hbm3_580.159.04.json"),
                    help="window: the sensor profile whose energy_j period and delay place the reference's "
                    "edges (the H100's)")
    ap.add_argument("--op-s", type=float, default=100e-6, help="measure: the operator's GPU time (100 us)")
    ap.add_argument("--precision", type=float, default=0.01, help="measure: precision asked (0.01)")
    ap.add_argument("--budget-s", type=float, default=30.0, help="measure: time budget (30 s)")
    ap.add_argument("--block-s", type=float, default=None, help="measure: block of back-to-back calls (library default)")
    ap.add_argument("--ref-s", type=float, default=6.0, help="measure: the reference's length (6 s)")
    ap.add_argument("--run", help="measure: also record the monitor into this run file, and compute the energy per "
                    "call from the counter alone over the measure's span (independent_mj)")
    ap.add_argument("--min-span-s", type=float, default=4.0,
                    help="measure: the least time between the reference's two counter updates (4 s)")
    ap.add_argument("--pairs", type=int, default=100000, help="cost: pairs per repetition (100000)")
    ap.add_argument("--tolerance-pct-kernels", type=float, default=3.0,
                    help="kernels: the kernel names plus the baseline against the window's total (3 %%)")
    ap.add_argument("--repeat-pct-kernels", type=float, default=20.0,
                    help="kernels: each top name's energy in every window against its median (20 %%)")
    args = ap.parse_args()
    if args.part == "check" and not args.dir:
        ap.error("check needs --dir")
    if args.part not in ("check", "selftest") and not args.out:
        ap.error(f"{args.part} needs --out")
    if args.part == "window" and not args.counter_log:
        args.counter_log = os.path.join(os.path.dirname(args.out) or ".", "window.counter.csv")
    if args.part not in ("check", "selftest"):  # those two read files or simulate: no truewatt needed
        global truewatt
        import truewatt
    parts = {"window": part_window, "check": part_check, "selftest": part_selftest, "measure": part_measure,
             "cost": part_cost, "torch": part_torch, "kernels": part_kernels}
    return parts[args.part](args)


if __name__ == "__main__":
    sys.exit(main())
