#!/usr/bin/env python3
"""A small transformer's training steps (random data, no downloads), for scripts/gpu-attrib.

  python3 apps/mix/torch_step.py [--steps N]             training steps, NVTX ranges per step
  python3 apps/mix/torch_step.py --steady OP[,OP...] [--seconds S] [--quiet S]

Training: 4 encoder layers (d_model 1024, 16 heads, feed-forward 4096, pre-norm, GELU), batch 8 x
512 tokens, bf16 autocast, AdamW, 3 warm-up steps then --steps steps (default 1200, ~16 s on an H100: many
phases of the step against the sensor's ~20 ms windows; 40 steps, 0.5 s, left every name
unresolved), each in the NVTX ranges "step" > "forward", "backward", "optimizer", with torch.cuda.synchronize() after each.

--steady: the model's top operators at its own shapes, each back to back for --seconds (default
4) between quiet stretches (--quiet, default 1.5 s), in the same process after 3 training steps:
  linear     the feed-forward's first matmul: (4096 x 1024) @ (1024 x 4096)^T + bias, bf16
  attention  scaled-dot-product attention, (8, 16, 512, 64) bf16
  layernorm  LayerNorm over (4096, 1024) bf16
  gelu       GELU over (4096, 4096) bf16
  adamw      one AdamW step of the model's parameters (the optimizer's fused/foreach kernels)
and other kernels of other kinds, for a power model's calibration (scripts/gpu-activity-calib):
  linear_out the feed-forward's second matmul: (4096 x 4096) @ (1024 x 4096)^T, bf16
  matmul_small  (1024 x 1024) @ (1024 x 1024), bf16
  matmul_fp32   (4096 x 4096) @ (4096 x 4096), fp32
  add        a + b over 64 M bf16 each (DRAM)        add_l2   the same over 2 M (L2-resident)
  softmax    over the last dim of (8, 16, 512, 512) bf16
  sum        the column sums of (8192 x 8192) fp32   copy     128 M bf16 copied
  relu       ReLU over (4096, 4096) bf16
and more of them, so that the calibration's coefficients rest on more kinds of kernels than the
step's (their uncertainty falls with the rows; each row is also a test of the model fitted without it):
  matmul_big (8192 x 8192) @ (8192 x 8192), bf16       matmul_fp16  (4096 x 4096) @ (4096 x 4096), fp16
  bmm        (256, 512, 128) @ (256, 128, 512), bf16   conv2d  3x3, 64 -> 64 channels, (32, 64, 56, 56) bf16
  mul        a * 2 over 64 M bf16                       exp     exp over 64 M fp32
  sigmoid_l2 sigmoid over 2 M bf16 (L2-resident)        sin_l2  sin over 1 M fp32 (L2-resident)
  mean       the row means of (8192 x 8192) fp32        amax    the row maxima of (8192 x 8192) bf16
  cumsum     over 16 M fp32                             sort    4 M fp32 sorted
  cross_entropy  over (8192, 32000) bf16 logits         embedding  65536 rows of a (50000 x 1024) bf16 table
  fill       128 M bf16 set to 1                        where   where(c, a, b) over 64 M bf16
Each op prints the lines scripts/gpu/attrib_table.py reads (times on truewatt's timeline,
$TW_T0_MONO_NS, as apps/mix/mix.cu does):
  mix.window pattern=torch-steady only=OP ... quiet_before_start_s=.. start_s=.. end_s=.. ...
  mix.kernel name=OP launches=CALLS mean_duration_s=..
"""
import argparse
import os
import sys
import time

OPS = ("linear", "attention", "layernorm", "gelu", "adamw")
CALIB_OPS = ("linear_out", "matmul_small", "matmul_fp32", "add", "add_l2", "softmax", "sum", "copy", "relu",
             "matmul_big", "matmul_fp16", "bmm", "conv2d", "mul", "exp", "sigmoid_l2", "sin_l2", "mean", "amax",
             "cumsum", "sort", "cross_entropy", "embedding", "fill", "where")
D, HEADS, FF, LAYERS, BATCH, SEQ = 1024, 16, 4096, 4, 8, 512


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=1200, help="measured training steps (default 1200)")
    p.add_argument("--steady", help="comma-separated operators to run back to back: " + ", ".join(OPS + CALIB_OPS))
    p.add_argument("--seconds", type=float, default=4.0, help="per operator with --steady (default 4)")
    p.add_argument("--quiet", type=float, default=1.5, help="quiet stretches around each --steady op (default 1.5)")
    a = p.parse_args()
    if a.steps < 1 or a.seconds <= 0 or a.quiet < 0:
        p.error("--steps must be >= 1, --seconds > 0, --quiet >= 0")
    a.ops = []
    if a.steady:
        a.ops = a.steady.split(",")
        bad = [o for o in a.ops if o not in OPS + CALIB_OPS]
        if bad:
            p.error("unknown operator(s) %s; known: %s" % (", ".join(bad), ", ".join(OPS + CALIB_OPS)))
    return a


def timeline():
    """(origin ns, clock name): truewatt's t0 when it runs us, else our own start."""
    t0 = os.environ.get("TW_T0_MONO_NS", "")
    if t0.isdigit():
        return int(t0), "tw"
    return time.monotonic_ns(), "self"  # time.monotonic is CLOCK_MONOTONIC on Linux


def calib_ops(torch, F, dev, h):
    """CALIB_OPS: their tensors made only when asked for (a few GB in all)."""
    bf, f32, f16 = torch.bfloat16, torch.float32, torch.float16
    made = {}

    def t(key, *shape, dtype=bf):
        if key not in made:
            made[key] = torch.randn(*shape, device=dev, dtype=dtype)
        return made[key]

    def ints(key, n, high):
        if key not in made:
            made[key] = torch.randint(0, high, (n,), device=dev)
        return made[key]

    return {
        "linear_out": lambda: F.linear(h, t("w2", D, FF)),
        "matmul_small": lambda: torch.mm(t("s1", 1024, 1024), t("s2", 1024, 1024)),
        "matmul_fp32": lambda: torch.mm(t("f1", 4096, 4096, dtype=f32), t("f2", 4096, 4096, dtype=f32)),
        "add": lambda: torch.add(t("a1", 64 << 20), t("a2", 64 << 20)),
        "add_l2": lambda: torch.add(t("l1", 2 << 20), t("l2", 2 << 20)),
        "softmax": lambda: F.softmax(t("sm", BATCH, HEADS, SEQ, SEQ), dim=-1),
        "sum": lambda: t("r", 8192, 8192, dtype=f32).sum(dim=0),
        "copy": lambda: t("cd", 128 << 20).copy_(t("cs", 128 << 20)),
        "relu": lambda: F.relu(h),
        "matmul_big": lambda: torch.mm(t("b1", 8192, 8192), t("b2", 8192, 8192)),
        "matmul_fp16": lambda: torch.mm(t("h1", 4096, 4096, dtype=f16), t("h2", 4096, 4096, dtype=f16)),
        "bmm": lambda: torch.bmm(t("q1", 256, 512, 128), t("q2", 256, 128, 512)),
        "conv2d": lambda: F.conv2d(t("ci", 32, 64, 56, 56), t("cw", 64, 64, 3, 3), padding=1),
        "mul": lambda: t("a1", 64 << 20) * 2,
        "exp": lambda: torch.exp(t("e", 64 << 20, dtype=f32)),
        "sigmoid_l2": lambda: torch.sigmoid(t("l1", 2 << 20)),
        "sin_l2": lambda: torch.sin(t("sn", 1 << 20, dtype=f32)),
        "mean": lambda: t("r", 8192, 8192, dtype=f32).mean(dim=1),
        "amax": lambda: t("rb", 8192, 8192).amax(dim=1),
        "cumsum": lambda: torch.cumsum(t("cu", 16 << 20, dtype=f32), dim=0),
        "sort": lambda: torch.sort(t("so", 4 << 20, dtype=f32)),
        "cross_entropy": lambda: F.cross_entropy(t("lg", 8192, 32000), ints("tg", 8192, 32000)),
        "embedding": lambda: F.embedding(ints("ix", 65536, 50000), t("em", 50000, 1024)),
        "fill": lambda: t("fl", 128 << 20).fill_(1.0),
        "where": lambda: torch.where(t("a1", 64 << 20) > 0, t("a1", 64 << 20), t("a2", 64 << 20)),
    }


def main():
    args = parse_args()
    try:
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
    except ImportError as e:
        sys.exit(f"torch_step: {e}")
    if not torch.cuda.is_available():
        sys.exit("torch_step: CUDA is not available")
    t0_ns, clock = timeline()
    tl = lambda ns: (ns - t0_ns) * 1e-9
    nvtx = torch.cuda.nvtx

    torch.manual_seed(0)
    dev = torch.device("cuda")
    layer = lambda: nn.TransformerEncoderLayer(D, HEADS, FF, dropout=0.0, activation="gelu", batch_first=True,
                                               norm_first=True)
    model = nn.Sequential(nn.TransformerEncoder(layer(), LAYERS, enable_nested_tensor=False), nn.Linear(D, D)).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randn(BATCH, SEQ, D, device=dev)
    y = torch.randn(BATCH, SEQ, D, device=dev)

    def step(measured):
        if measured:
            nvtx.range_push("step")
            nvtx.range_push("forward")
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = F.mse_loss(model(x).float(), y)
        if measured:
            nvtx.range_pop()
            nvtx.range_push("backward")
        loss.backward()
        if measured:
            nvtx.range_pop()
            nvtx.range_push("optimizer")
        opt.step()
        torch.cuda.synchronize()
        if measured:
            nvtx.range_pop()
            nvtx.range_pop()
        return loss

    for _ in range(3):  # warm-up: allocator, cuBLAS heuristics, AdamW state
        step(False)
    if not args.ops:
        t = time.monotonic()
        for _ in range(args.steps):
            loss = step(True)
        dt = time.monotonic() - t
        print(f"torch_step: layers={LAYERS} d={D} batch={BATCH}x{SEQ} steps={args.steps} time_s={dt:.3f} "
              f"step_ms={dt / args.steps * 1e3:.2f} loss={loss.item():.5f}")
        return

    bf = torch.bfloat16
    a = torch.randn(BATCH * SEQ, D, device=dev, dtype=bf)
    w1, b1 = torch.randn(FF, D, device=dev, dtype=bf) * 0.02, torch.zeros(FF, device=dev, dtype=bf)
    q, k, v = (torch.randn(BATCH, HEADS, SEQ, D // HEADS, device=dev, dtype=bf) for _ in range(3))
    ln = nn.LayerNorm(D, device=dev, dtype=bf)
    h = torch.randn(BATCH * SEQ, FF, device=dev, dtype=bf)
    ops = {
        "linear": lambda: F.linear(a, w1, b1),
        "attention": lambda: F.scaled_dot_product_attention(q, k, v),
        "layernorm": lambda: ln(a),
        "gelu": lambda: F.gelu(h),
        "adamw": lambda: opt.step(),
    }
    ops.update(calib_ops(torch, F, dev, h))
    # the model's gradients stay from the last step, so adamw updates real parameter shapes
    for op in args.ops:
        fn = ops[op]
        with torch.no_grad():
            for _ in range(5):
                fn()
            torch.cuda.synchronize()
            t = time.monotonic()
            for _ in range(20):
                fn()
            torch.cuda.synchronize()
            batch = max(10, int(0.005 / max((time.monotonic() - t) / 20, 1e-7)))  # ~5 ms queued at a time
            qb0 = time.monotonic_ns()
            time.sleep(args.quiet)
            qb1 = start = time.monotonic_ns()
            stop = start + int(args.seconds * 1e9)
            calls = 0
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
            while time.monotonic_ns() < stop:
                for _ in range(batch):
                    fn()
                calls += batch
                torch.cuda.synchronize()  # keeps the queue short, so the end is on time
            e1.record()
            torch.cuda.synchronize()
            end = qa0 = time.monotonic_ns()
            time.sleep(args.quiet)
            qa1 = time.monotonic_ns()
        print(f"mix.window pattern=torch-steady only={op} seed=0 clock={clock} "
              f"quiet_before_start_s={tl(qb0):.9f} quiet_before_end_s={tl(qb1):.9f} start_s={tl(start):.9f} "
              f"end_s={tl(end):.9f} quiet_after_start_s={tl(qa0):.9f} quiet_after_end_s={tl(qa1):.9f}")
        print(f"mix.kernel name={op} launches={calls} mean_duration_s={e0.elapsed_time(e1) * 1e-3 / calls:.9f}",
              flush=True)


if __name__ == "__main__":
    main()
