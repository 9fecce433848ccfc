#!/usr/bin/env python3
"""A PyTorch training run of a given duration for scripts/gpu-scale (issue 16):
a small transformer (many short kernels per step, as real training has:
~hundreds of launches a step) trained with AdamW under bf16 autocast on random
data, seeds fixed, nothing downloaded.

  python3 scripts/gpu/train_scale.py --seconds S      train for S seconds
  python3 scripts/gpu/train_scale.py --steps N        train exactly N steps

One NVTX range "train" spans all the steps, and one range per 100 steps
("steps 0-99", ...). Before the first step and after the last the GPU's
energy counter is read through NVML (pynvml, when installed) after a
synchronize: an independent reference for the range's energy. The first 20
steps are a warm-up outside the ranges and the timings.

Prints one line of key=value pairs on stdout:
  steps=N train_s=X step_ms_median=Y step_ms_first=Z nvml_energy_j=E
and with --step-times FILE writes each step's wall time (ms), one a line, taken
after a synchronize every 10 steps (the time of 10 steps / 10), so that two runs
of the same steps compare step for step.
"""
import argparse
import os
import statistics
import sys
import time


def nvml_energy_j():
    """The GPU's total energy counter (J) through pynvml, or None."""
    try:
        import pynvml
        pynvml.nvmlInit()
        idx = int((os.environ.get("CUDA_VISIBLE_DEVICES") or "0").split(",")[0] or 0)
        h = pynvml.nvmlDeviceGetHandleByIndex(idx)
        return pynvml.nvmlDeviceGetTotalEnergyConsumption(h) / 1000.0
    except Exception:  # no pynvml, no counter: no reference
        return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--seconds", type=float, help="train for this long")
    g.add_argument("--steps", type=int, help="train exactly this many steps")
    ap.add_argument("--step-times", help="write each step's wall time (ms) here")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    import torch
    import torch.nn as nn

    if not torch.cuda.is_available():
        print("train_scale: no CUDA device", file=sys.stderr)
        return 2
    torch.manual_seed(args.seed)
    torch.cuda.manual_seed_all(args.seed)
    dev = torch.device("cuda")
    nvtx = torch.cuda.nvtx
    d_model, layers, batch, seq = 256, 6, 16, 128
    layer = nn.TransformerEncoderLayer(d_model, 8, 4 * d_model, batch_first=True, dropout=0.0)
    model = nn.Sequential(nn.TransformerEncoder(layer, layers), nn.Linear(d_model, d_model)).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randn(batch, seq, d_model, device=dev)
    y = torch.randn(batch, seq, d_model, device=dev)

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()

    for _ in range(20):  # warm-up: allocator, kernels chosen
        step()
    torch.cuda.synchronize()

    times_ms = []
    e0 = nvml_energy_j()
    t_start = time.perf_counter()
    nvtx.range_push("train")
    n = 0
    last = t_start
    while True:
        if args.steps is not None and n >= args.steps:
            break
        if args.seconds is not None and n % 10 == 0 and time.perf_counter() - t_start >= args.seconds:
            break
        if n % 100 == 0:
            if n:
                nvtx.range_pop()
            nvtx.range_push(f"steps {n}-{n + 99}")
        step()
        n += 1
        if n % 10 == 0:
            torch.cuda.synchronize()
            now = time.perf_counter()
            times_ms.extend([(now - last) * 100.0] * 10)  # ms per step over the 10
            last = now
    torch.cuda.synchronize()
    if n:
        nvtx.range_pop()
    nvtx.range_pop()
    train_s = time.perf_counter() - t_start
    e1 = nvml_energy_j()
    if args.step_times:
        with open(args.step_times, "w") as f:
            f.writelines(f"{t:.4f}\n" for t in times_ms)
    energy = "nan" if e0 is None or e1 is None else f"{e1 - e0:.3f}"
    med = statistics.median(times_ms) if times_ms else float("nan")
    print(f"steps={n} train_s={train_s:.3f} step_ms_median={med:.4f} "
          f"step_ms_first={times_ms[0] if times_ms else float('nan'):.4f} nvml_energy_j={energy}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
