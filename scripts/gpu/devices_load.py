#!/usr/bin/env python3
"""A load on chosen CUDA devices, for the GPU-mapping checks of scripts/gpu-devices.

Runs bf16 matrix products (8192^3) back to back for --seconds on each device in --devices (CUDA
indices as this process sees them, i.e. after CUDA_VISIBLE_DEVICES), all devices at once (one
stream each), then synchronizes. Prints, per device, the CUDA index, its UUID (as NVML writes it)
and the number of products, so the check can tell which physical GPU ran them. Random data,
nothing downloaded.

  python3 scripts/gpu/devices_load.py [--devices 0] [--seconds 3]
"""
import argparse
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--devices", default="0", help="CUDA indices, comma-separated (0)")
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--n", type=int, default=8192)
    args = ap.parse_args()
    import torch

    devs = [int(x) for x in args.devices.split(",")]
    mats = {}
    for d in devs:
        g = torch.Generator(device=f"cuda:{d}").manual_seed(d)
        a = torch.randn(args.n, args.n, device=f"cuda:{d}", dtype=torch.bfloat16, generator=g)
        mats[d] = (a, a.t().contiguous())
    for d in devs:
        torch.cuda.synchronize(d)
    count = {d: 0 for d in devs}
    end = time.monotonic() + args.seconds
    while time.monotonic() < end:
        for d in devs:
            with torch.cuda.device(d):
                a, b = mats[d]
                torch.mm(a, b)
                count[d] += 1
        if sum(count.values()) % (8 * len(devs)) == 0:
            for d in devs:
                torch.cuda.synchronize(d)
    for d in devs:
        torch.cuda.synchronize(d)
        uuid = str(torch.cuda.get_device_properties(d).uuid)
        print(f"device cuda:{d} uuid=GPU-{uuid} products={count[d]}")


if __name__ == "__main__":
    main()
