#!/usr/bin/env python3
"""A load on one CUDA device for scripts/gpu-exporter: bf16 matrix products of size --n for
--seconds, busy for --duty of every --period seconds (1: back to back), then idle. Random
data, nothing downloaded. Prints the number of products.

  python3 scripts/exporter/load.py --device 0 --n 8192 --duty 1 --seconds 60
"""
import argparse
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", type=int, default=0)
    ap.add_argument("--n", type=int, default=8192)
    ap.add_argument("--duty", type=float, default=1.0)
    ap.add_argument("--period", type=float, default=0.5)
    ap.add_argument("--seconds", type=float, default=60.0)
    args = ap.parse_args()
    import torch

    dev = torch.device("cuda:%d" % args.device)
    g = torch.Generator(device=dev).manual_seed(args.device)
    a = torch.randn(args.n, args.n, device=dev, dtype=torch.bfloat16, generator=g)
    b = a.t().contiguous()
    torch.cuda.synchronize(dev)
    count = 0
    start = time.monotonic()
    end = start + args.seconds
    while time.monotonic() < end:
        # busy for duty * period, then idle for the rest of the period
        t_period = time.monotonic()
        while time.monotonic() - t_period < args.duty * args.period and time.monotonic() < end:
            for _ in range(4):
                torch.mm(a, b)
                count += 1
            torch.cuda.synchronize(dev)
        rest = args.period - (time.monotonic() - t_period)
        if rest > 0 and args.duty < 1:
            time.sleep(min(rest, max(0.0, end - time.monotonic())))
    torch.cuda.synchronize(dev)
    print("device %d: %d products of %d^3 in %.1f s (duty %.2f)" % (args.device, count, args.n,
                                                                     time.monotonic() - start, args.duty))


if __name__ == "__main__":
    main()
