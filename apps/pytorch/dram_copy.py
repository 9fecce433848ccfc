#!/usr/bin/env python3
"""A known amount of DRAM traffic, to check the breakdown's counts: REPS elementwise kernels
y = x + 1 over a 1 GiB float32 tensor inside the NVTX range tw_measure (a kernel, not
cudaMemcpy, which the breakdown does not count). Each copy reads 1 GiB and writes 1 GiB,
33.5 M 32-byte sectors each way, about 20 times the L2. usage: dram_copy.py [REPS] (default 200)"""
import sys
import time


def main():
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    if reps < 1:
        sys.exit("dram_copy.py: REPS must be 1 or more")
    import torch
    if not torch.cuda.is_available():
        sys.exit("dram_copy.py: no CUDA device")
    x = torch.ones(1 << 28, device="cuda")
    y = torch.empty_like(x)
    torch.add(x, 1.0, out=y)  # warm-up
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_push("tw_measure")
    t0 = time.perf_counter()
    for _ in range(reps):
        torch.add(x, 1.0, out=y)
    torch.cuda.synchronize()
    secs = time.perf_counter() - t0
    torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    gib = 2.0 * reps
    print(f"dram_copy: reps={reps} bytes_moved_GiB={gib:.0f} expected_dram_sectors={2 * reps * (1 << 30) // 32} "
          f"time_s={secs:.4f} GB/s={gib * (1 << 30) / secs / 1e9:.0f}")


if __name__ == "__main__":
    main()
