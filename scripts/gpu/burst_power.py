#!/usr/bin/env python3
"""Does a GPU operator draw more power in short bursts than back to back? (issue 17: truewatt.measure's
blocks against the back-to-back reference of scripts/gpu-api.)

  python3 scripts/gpu/burst_power.py [--bursts 5] [--run-s 4] [--idle-s 1.0] [--op-s 1e-4]

The same operator as scripts/gpu/api_check.py's measure part (a bf16 matrix product + synchronize of
~--op-s of GPU time), run back to back for --run-s after --idle-s of idle, --bursts times. A thread
reads NVML's energy counter (pynvml, independent of truewatt) continuously; each counter update gives
the energy since the previous one and the calls made in between. Prints, per 100 ms-update slot
after a burst's start (averaged over the bursts), the power (W) and the energy per call (mJ), and the
ratio of the first 0.2 s (truewatt.measure's block) and of 0.2-0.5 s to the steady part (after 1 s).
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import api_check  # noqa: E402 (the operator and the counter, one definition)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bursts", type=int, default=5)
    ap.add_argument("--run-s", type=float, default=4.0)
    ap.add_argument("--idle-s", type=float, default=1.0)
    ap.add_argument("--op-s", type=float, default=1e-4)
    a = ap.parse_args()
    import torch

    op, gpu_s, what = api_check.operator(False, a.op_s)
    uuid = "GPU-" + str(torch.cuda.get_device_properties(0).uuid)
    counter = api_check.Counter(False, uuid)
    width = max(3 * counter.calibrate() + 0.001, 0.005)
    print(f"operator: {what}, {gpu_s * 1e6:.1f} us of GPU time; counter read {width * 1e3:.1f} ms at most wide")
    sys.setswitchinterval(0.0005)
    slots: dict = {}
    for b in range(a.bursts):
        time.sleep(a.idle_s)
        calls = [0]
        th = api_check.CounterThread(counter, calls)
        th.start()
        time.sleep(0.25)  # the thread has seen an update before the burst
        t0 = time.monotonic()
        while time.monotonic() < t0 + a.run_s:
            for _ in range(10):
                op()
                calls[0] += 1
        th.stop.set()
        th.join()
        ups = [u for u in th.updates if u[3] <= width]
        for (ta, ea, na, _), (tb, eb, nb, _) in zip(ups, ups[1:]):
            if ta < t0 or tb - ta > 0.15 or nb <= na:
                continue
            k = int((ta - t0) / 0.1)
            slots.setdefault(k, []).append(((eb - ea) / (tb - ta), (eb - ea) / (nb - na)))
    print("slot_s  updates  power_w  mj_per_call")
    for k in sorted(slots):
        v = slots[k]
        print(f"{k * 0.1:5.1f}  {len(v):7d}  {sum(x[0] for x in v) / len(v):7.1f}  {sum(x[1] for x in v) / len(v) * 1e3:11.4f}")

    def mean(lo, hi):
        v = [x[1] for k, xs in slots.items() if lo <= k * 0.1 < hi for x in xs]
        return sum(v) / len(v) if v else float("nan")

    steady = mean(1.0, a.run_s)
    print(f"energy per call, first 0.2 s against after 1 s: {100 * (mean(0, 0.2) / steady - 1):+.2f} %; "
          f"0.2-0.5 s: {100 * (mean(0.2, 0.5) / steady - 1):+.2f} %; steady {steady * 1e3:.4f} mJ")
    return 0


if __name__ == "__main__":
    sys.exit(main())
