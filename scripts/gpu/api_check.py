#!/usr/bin/env python3
"""The Python API on a GPU (scripts/gpu-api): three parts, each against an
independent reference taken in the same process.

  window   R windows, each around one PyTorch training step (a small
           transformer block, a few hundred ms) with quiet stretches before
           and after it, its edges on the ends of two of the NVML energy
           counter's windows (read here with pynvml, its own library: an
           update at u publishes the energy up to u - delay, the delay and
           period from the GPU's sensor profile; the edge is put at the next
           update's u + period - delay): the window's energy against the
           counter's difference between the two updates that publish those
           ends; each window is also an NVTX range of the same name, so
           `truewatt run` around this program gives a third number (compared
           by scripts/gpu-api). Writes window.csv.
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
"""
from __future__ import annotations

import argparse
import ctypes
import csv
import os
import statistics
import sys
import threading
import time

import truewatt


def log(msg: str) -> None:
    print(f"api_check: {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------- the energy counter (independent of truewatt)


class Counter:
    """NVML's total energy counter of one GPU, in J (pynvml; --dry: ctypes on the fake)."""

    def __init__(self, dry: bool, uuid: str) -> None:
        self.dry = dry
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
        if self.dry:
            mj = ctypes.c_ulonglong()
            assert self._lib.nvmlDeviceGetTotalEnergyConsumption(self._h, ctypes.byref(mj)) == 0
            return mj.value / 1e3
        return self._nv.nvmlDeviceGetTotalEnergyConsumption(self._h) / 1e3

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


def monitor_and_counter(dry: bool, counter_period_s: float = 0.0):
    """The monitor on the GPU torch calls cuda:0, and that GPU's counter by its UUID."""
    mon = truewatt.Monitor(gpus=None if dry else ["cuda:0"], counter_period_s=counter_period_s or None)
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


def on_boundary(counter: Counter, width: float, period_s: float, delay_s: float) -> float:
    """Returns at the end of the counter window that its next update will publish (the caller puts
    its edge there and then reads that update's value).

    The counter publishes at each update u the energy up to u - delay (its profile's delay). An update
    is seen between the previous read's start and the detecting read's end (Counter.next_update); its
    time is the middle of that interval. The next update comes one period later and covers the energy
    up to u + period - delay."""
    _, t, w = counter.next_update(width)
    u = t - w / 2
    edge = u + period_s - delay_s
    while time.monotonic() < edge:
        pass  # spin: a sleep could wake late by a scheduler tick
    return edge


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
    log(f"counter: a read takes {read_s * 1e3:.2f} ms; edges detected within {width * 1e3:.2f} ms are used")
    rows = []
    for r in range(args.reps):
        name = f"api_step_{r}"
        time.sleep(args.idle_s)  # quiet before the window: its begin edge on the baseline
        on_boundary(counter, width, period_s, delay_s)  # the begin on the end of a counter window ...
        mon.begin_window(name)
        nvtx.push(name)
        c0, _, w0 = counter.next_update(width)  # ... whose value the next update publishes
        for _ in range(args.steps):
            step()
        time.sleep(args.margin_s)  # quiet after the work: the GPU's tail decays, the end edge on the baseline
        on_boundary(counter, width, period_s, delay_s)
        nvtx.pop(name)
        m = mon.end_window(name)
        c1, _, w1 = counter.next_update(width)
        rows.append((name, m, c1 - c0, w0, w1))
    nvtx.flush()
    with open(args.out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["name", "nvml_index", "uuid", "time_s", "window_j", "window_sd_j", "baseline_j",
                    "above_baseline_j", "counter_j", "window_vs_counter_pct", "begin_edge_ms", "end_edge_ms",
                    "reading"])
        dev = mon.devices[0]
        for name, m, cj, w0, w1 in rows:
            e = m.energy_j[0]
            w.writerow([name, dev.index, dev.uuid, f"{m.time_s:.6f}", f"{e:.4f}", f"{m.energy_sd_j[0]:.4f}",
                        f"{m.baseline_j[0]:.4f}", f"{m.above_baseline_j[0]:.4f}", f"{cj:.4f}",
                        f"{100 * (e / cj - 1):+.3f}", f"{w0 * 1e3:.3f}", f"{w1 * 1e3:.3f}", m.reading[0]])
            log(f"{name}: {m.time_s:.3f} s, window {e:.2f} J +- {m.energy_sd_j[0]:.2f}, counter {cj:.2f} J "
                f"({100 * (e / cj - 1):+.2f} %)")
    mon.close()
    return 0


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


def part_measure(args) -> int:
    op, gpu_s, what = operator(args.dry, args.op_s)
    log(f"operator: {what}: {gpu_s * 1e6:.1f} us of GPU time")
    mon, counter = monitor_and_counter(args.dry)
    for _ in range(100):
        op()
    r = truewatt.measure(op, precision=args.precision, budget_s=args.budget_s, monitor=mon)
    log(f"truewatt.measure: {r.energy_j * 1e3:.4f} mJ +- {r.energy_sd_j * 1e3:.4f} a call, {r.time_s * 1e6:.1f} us, "
        f"{r.calls} calls, {r.power_above_baseline_w:.1f} W above baseline")
    mon.close()

    # the reference: the same callable back to back for >= ref_s, between two counter updates
    width = max(3 * counter.calibrate() + 0.001, 0.005)  # the thread sleeps 1 ms between reads
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
                    "measure_vs_reference_pct"])
        w.writerow([what, f"{gpu_s * 1e6:.2f}", f"{r.energy_j * 1e3:.5f}", f"{r.energy_sd_j * 1e3:.5f}",
                    f"{r.time_s * 1e6:.2f}", r.calls, f"{r.power_above_baseline_w:.2f}", f"{ref_j * 1e3:.5f}",
                    f"{ref_s * 1e6:.2f}", nb - na, f"{tb - ta:.3f}", f"{100 * (r.energy_j / ref_j - 1):+.3f}"])
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
    their energies positive and together at most the step's (the step also holds the optimizer)."""
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
        sizes = 0 < f.energy_j[0] and 0 < b.energy_j[0] and f.energy_j[0] + b.energy_j[0] <= st.energy_j[0] * 1.01
        ok &= order and sizes
        rows.append((i, st.time_s, st.energy_j[0], f.time_s, f.energy_j[0], b.time_s, b.energy_j[0], order, sizes))
        log(f"step {i}: {st.time_s * 1e3:.1f} ms {st.energy_j[0]:.2f} J; forward {f.time_s * 1e3:.1f} ms "
            f"{f.energy_j[0]:.2f} J; backward {b.time_s * 1e3:.1f} ms {b.energy_j[0]:.2f} J; in order {order}, "
            f"energies consistent {sizes}")
    marks.remove()
    mon.close()
    with open(args.out, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["step", "step_s", "step_j", "forward_s", "forward_j", "backward_s", "backward_j", "in_order",
                    "energies_consistent"])
        w.writerows(rows)
    return 0 if ok else 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("part", choices=["window", "measure", "cost", "torch"])
    ap.add_argument("--out", required=True)
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
    ap.add_argument("--ref-s", type=float, default=6.0, help="measure: the reference's length (6 s)")
    ap.add_argument("--min-span-s", type=float, default=4.0,
                    help="measure: the least time between the reference's two counter updates (4 s)")
    ap.add_argument("--pairs", type=int, default=100000, help="cost: pairs per repetition (100000)")
    args = ap.parse_args()
    parts = {"window": part_window, "measure": part_measure, "cost": part_cost, "torch": part_torch}
    return parts[args.part](args)


if __name__ == "__main__":
    sys.exit(main())
