#!/usr/bin/env python3
"""ResNet-50 training steps on synthetic data, for energy measurement.

Warm-up steps run outside the NVTX range; exactly --steps measured steps run
inside the range "tw_measure", which both ncu (--nvtx --nvtx-include
"tw_measure/") and truewatt (breakdown --range tw_measure) select, so the same
command line can be run under each.
"""
import argparse
import sys
import time


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--batch", type=int, default=32, help="images per step (default 32)")
    p.add_argument("--steps", type=int, default=5, help="measured steps (default 5)")
    p.add_argument("--warmup", type=int, default=3, help="unmeasured warm-up steps (default 3)")
    p.add_argument("--amp", action="store_true", help="autocast to bfloat16")
    p.add_argument("--channels-last", action="store_true", help="NHWC memory format")
    p.add_argument("--count-step", action="store_true",
                   help="one more step, alone in the NVTX range tw_count, before tw_measure: what "
                        "`truewatt breakdown --count-range tw_count` profiles for the counts of every step")
    a = p.parse_args()
    if a.batch < 1 or a.steps < 1 or a.warmup < 0:
        p.error("--batch and --steps must be >= 1, --warmup >= 0")
    return a


def main():
    args = parse_args()
    # Imported after parsing so --help and bad arguments work without torch.
    try:
        import torch
        import torchvision
    except ImportError as e:
        sys.exit(f"train_step: {e}")
    if not torch.cuda.is_available():
        sys.exit("train_step: CUDA is not available")

    torch.manual_seed(0)
    dev = torch.device("cuda")
    fmt = torch.channels_last if args.channels_last else torch.contiguous_format

    model = torchvision.models.resnet50(weights=None).to(dev, memory_format=fmt).train()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()
    # Created once on the GPU so the measured steps contain no host->device copies.
    x = torch.randn(args.batch, 3, 224, 224, device=dev).contiguous(memory_format=fmt)
    y = torch.randint(0, 1000, (args.batch,), device=dev)

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=args.amp):
            loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss

    # Warm-up: cuDNN algorithm selection, allocator growth, momentum buffers.
    for _ in range(args.warmup):
        step()
    torch.cuda.synchronize()

    if args.count_step:  # a steady-state step like every measured one, profiled alone
        torch.cuda.nvtx.range_push("tw_count")
        step()
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()
        torch.cuda.synchronize()

    torch.cuda.nvtx.range_push("tw_measure")
    t0 = time.perf_counter()
    for _ in range(args.steps):
        loss = step()
    torch.cuda.synchronize()
    secs = time.perf_counter() - t0
    torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()

    # .item() only after the range: reading the loss inside would add a sync per step.
    print(f"train_step: model=resnet50 batch={args.batch} steps={args.steps} "
          f"amp={'bf16' if args.amp else 'off'} channels_last={int(args.channels_last)} "
          f"time_s={secs:.4f} images/s={args.batch * args.steps / secs:.1f} "
          f"loss={loss.item():.4f}")


if __name__ == "__main__":
    main()
