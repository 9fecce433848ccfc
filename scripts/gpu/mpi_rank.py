#!/usr/bin/env python3
"""One rank of scripts/gpu-mpi: bf16 matrix products on CUDA device 0 (the GPU CUDA_VISIBLE_DEVICES
gives this rank), at an intensity that differs by rank, so that the GPUs draw different powers.

Rank r runs for --seconds; in each 100 ms period it multiplies for a share busy(r) of it and
sleeps the rest: busy = 1.0 for rank 0, 0.35 for rank 1, 0.6 for rank 2, ... The rank comes from
OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID or RANK, as truewatt reads it. Prints one JSON line:
rank, local rank, the device's UUID (as NVML writes it), products done. Random data, nothing
downloaded; changes no GPU setting.

  python3 scripts/gpu/mpi_rank.py [--seconds 20] [--n 8192]
"""
import argparse
import json
import os
import time

BUSY = [1.0, 0.35, 0.6, 0.8, 0.2, 0.5, 0.9, 0.4]


def env_int(*names, default=0):
    for n in names:
        v = os.environ.get(n)
        if v not in (None, ""):
            return int(v)
    return default


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--n", type=int, default=8192)
    ap.add_argument("--period", type=float, default=0.1, help="the duty cycle's period, s (default 0.1)")
    ap.add_argument("--busy", type=float, default=None, help="the busy share of each period (default: by rank)")
    args = ap.parse_args()
    import torch

    rank = env_int("OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID", "RANK")
    local = env_int("OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID", "LOCAL_RANK", default=rank)
    busy = BUSY[rank % len(BUSY)] if args.busy is None else args.busy
    dev = torch.device("cuda:0")
    g = torch.Generator(device=dev).manual_seed(rank)
    a = torch.randn(args.n, args.n, device=dev, dtype=torch.bfloat16, generator=g)
    b = a.t().contiguous()
    torch.cuda.synchronize()
    done = 0
    end = time.monotonic() + args.seconds
    while time.monotonic() < end:
        period_end = time.monotonic() + args.period
        work_end = time.monotonic() + args.period * busy
        while time.monotonic() < work_end:
            torch.mm(a, b)
            done += 1
            if done % 4 == 0:
                torch.cuda.synchronize()
        torch.cuda.synchronize()
        rest = period_end - time.monotonic()
        if rest > 0:
            time.sleep(rest)
    uuid = str(torch.cuda.get_device_properties(0).uuid)
    print(json.dumps({"rank": rank, "local_rank": local, "busy": busy, "uuid": "GPU-" + uuid, "products": done}),
          flush=True)


if __name__ == "__main__":
    main()
