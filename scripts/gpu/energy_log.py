#!/usr/bin/env python3
"""Each GPU's NVML energy counter, read independently of truewatt (pynvml), for scripts/gpu-mpi.

Polls nvmlDeviceGetTotalEnergyConsumption of every GPU every --period seconds until SIGTERM or
SIGINT, writing CSV rows t_mono_ns,index,uuid,energy_mj (t: CLOCK_MONOTONIC at the middle of the
call, the clock truewatt's run files are on). Reads only; changes no setting.

  python3 scripts/gpu/energy_log.py --out energy.csv [--period 0.02]
"""
import argparse
import signal
import time

import pynvml

stop = False


def on_signal(sig, frame):
    global stop
    stop = True


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--period", type=float, default=0.02)
    args = ap.parse_args()
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    pynvml.nvmlInit()
    handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(pynvml.nvmlDeviceGetCount())]
    uuids = [pynvml.nvmlDeviceGetUUID(h) for h in handles]
    uuids = [u.decode() if isinstance(u, bytes) else u for u in uuids]
    with open(args.out, "w") as f:
        f.write("t_mono_ns,index,uuid,energy_mj\n")
        f.flush()
        while not stop:
            for i, h in enumerate(handles):
                a = time.monotonic_ns()
                e = pynvml.nvmlDeviceGetTotalEnergyConsumption(h)
                b = time.monotonic_ns()
                f.write(f"{(a + b) // 2},{i},{uuids[i]},{e}\n")
            f.flush()
            time.sleep(args.period)
    pynvml.nvmlShutdown()


if __name__ == "__main__":
    main()
