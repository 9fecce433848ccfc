#!/usr/bin/env python3
"""A PyTorch workload for validating truewatt on a GPU.

Phases, each inside an NVTX range (torch.cuda.nvtx), with idle gaps between:
  1. matrix products: bf16 and fp32, n = 4096 and 8192 (fp32 without TF32,
     PyTorch's default), several products each;
  2. training: ~30 steps of a tiny transformer encoder (AdamW, bf16 autocast)
     on random data, one NVTX range per step.
Seeds are fixed and nothing is downloaded. Ends with torch.cuda.synchronize().

Prints a CSV of the phases on stdout: their NVTX names and host times on the
trace timeline (CLOCK_MONOTONIC seconds since $TW_T0_MONO_NS, 0 when unset),
taken after a synchronize at each end. With --bench (no idle gaps), prints
only "wall_s=X", the wall time of a warmed-up steady state (the whole workload
runs once first as a warm-up, then 10 rounds of products and training steps are
timed; run with
and without the injection library to measure its overhead).

  python3 scripts/gpu/torch_workload.py [--steps 30] [--idle 0.5] [--bench]
"""
import argparse
import os
import sys
import time


def mono_s(t0_ns):
    return (time.clock_gettime_ns(time.CLOCK_MONOTONIC) - t0_ns) / 1e9


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=30, help="training steps (30)")
    ap.add_argument("--sizes", default="4096,8192", help="matrix sizes (4096,8192)")
    ap.add_argument("--reps", type=int, default=10, help="products per size and type (10)")
    ap.add_argument("--idle", type=float, default=0.5, help="idle seconds between phases (0.5)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--bench", action="store_true", help="print only the wall time")
    args = ap.parse_args()

    import torch
    import torch.nn as nn

    if not torch.cuda.is_available():
        print("torch_workload: no CUDA device", file=sys.stderr)
        return 2
    t0_ns = int(os.environ.get("TW_T0_MONO_NS", "0") or 0)
    torch.manual_seed(args.seed)
    torch.cuda.manual_seed_all(args.seed)
    dev = torch.device("cuda")
    nvtx = torch.cuda.nvtx
    rows = []

    def phase(name, fn):
        torch.cuda.synchronize()
        start = mono_s(t0_ns)
        nvtx.range_push(name)
        fn()
        torch.cuda.synchronize()
        nvtx.range_pop()
        rows.append((name, start, mono_s(t0_ns)))
        if args.idle > 0 and not args.bench:
            time.sleep(args.idle)

    wall0 = time.perf_counter()
    torch.ones(1, device=dev).sum().item()  # context and allocator up

    # ---- 1. matrix products
    sizes = [int(s) for s in args.sizes.split(",") if s]
    for dtype, tname in ((torch.bfloat16, "bf16"), (torch.float32, "fp32")):
        for n in sizes:
            a = torch.randn(n, n, device=dev, dtype=dtype)
            b = torch.randn(n, n, device=dev, dtype=dtype)
            c = torch.empty(n, n, device=dev, dtype=dtype)

            def products(a=a, b=b, c=c):
                for _ in range(args.reps):
                    torch.matmul(a, b, out=c)

            products()  # cuBLAS heuristics and workspace, outside the range
            phase(f"matmul {tname} {n}x{n} x{args.reps}", products)
            del a, b, c

    # ---- 2. training a tiny transformer on random tokens
    d_model, heads, layers, seq, batch, vocab = 512, 8, 4, 256, 32, 8192

    class Tiny(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(vocab, d_model)
            layer = nn.TransformerEncoderLayer(d_model, heads, 4 * d_model, dropout=0.0, batch_first=True)
            self.encoder = nn.TransformerEncoder(layer, layers)
            self.head = nn.Linear(d_model, vocab)

        def forward(self, x):
            return self.head(self.encoder(self.embed(x)))

    model = Tiny().to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    loss_fn = nn.CrossEntropyLoss()
    gen = torch.Generator(device=dev)
    gen.manual_seed(args.seed)
    data = [
        (torch.randint(0, vocab, (batch, seq), device=dev, generator=gen),
         torch.randint(0, vocab, (batch, seq), device=dev, generator=gen))
        for _ in range(4)
    ]
    losses = []

    def train():
        for step in range(args.steps):
            nvtx.range_push(f"train step {step}")
            x, y = data[step % len(data)]
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = loss_fn(model(x).float().view(-1, vocab), y.view(-1))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            losses.append(loss.detach())
            nvtx.range_pop()

    phase(f"train tiny transformer x{args.steps}", train)
    torch.cuda.synchronize()
    wall = time.perf_counter() - wall0
    if args.bench:
        # everything above was the warm-up (context, cuBLAS/cuDNN heuristics,
        # allocator): time the steady state, so that a 1 % effect is visible
        n = sizes[-1]
        a = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
        b = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
        c = torch.empty(n, n, device=dev, dtype=torch.bfloat16)
        torch.cuda.synchronize()
        t = time.perf_counter()
        for _ in range(10):
            for _ in range(args.reps):
                torch.matmul(a, b, out=c)
            train()
        torch.cuda.synchronize()
        wall = time.perf_counter() - t

    if args.bench:
        print(f"wall_s={wall:.6f}")
        return 0
    print("name,start_s,end_s")
    for name, start, end in rows:
        print(f"\"{name}\",{start:.6f},{end:.6f}")
    print(f"torch_workload: {torch.cuda.get_device_name(dev)}, torch {torch.__version__}, "
          f"final loss {losses[-1].item():.4f}, wall {wall:.3f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
