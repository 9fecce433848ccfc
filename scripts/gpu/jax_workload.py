#!/usr/bin/env python3
"""A JAX workload for `truewatt run`: a small MLP trained with jit on random data (no downloads),
then bf16 and fp32 matrix products, with idle gaps between the phases.

  python3 scripts/gpu/jax_workload.py [--steps 200]
"""
import argparse
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=200)
    args = ap.parse_args()
    import jax
    import jax.numpy as jnp

    key = jax.random.PRNGKey(0)
    k1, k2, k3, k4 = jax.random.split(key, 4)
    d_in, d_h, d_out, batch = 1024, 4096, 1024, 2048
    params = {
        "w1": jax.random.normal(k1, (d_in, d_h)) * 0.02,
        "w2": jax.random.normal(k2, (d_h, d_out)) * 0.02,
    }
    x = jax.random.normal(k3, (batch, d_in))
    y = jax.random.normal(k4, (batch, d_out))

    def loss(p, x, y):
        h = jax.nn.gelu(x @ p["w1"])
        return jnp.mean((h @ p["w2"] - y) ** 2)

    @jax.jit
    def step(p, x, y):
        l, g = jax.value_and_grad(loss)(p, x, y)
        return jax.tree_util.tree_map(lambda a, b: a - 1e-3 * b, p, g), l

    params, l = step(params, x, y)
    l.block_until_ready()
    time.sleep(0.5)
    t = time.monotonic()
    for _ in range(args.steps):
        params, l = step(params, x, y)
    l.block_until_ready()
    train_s = time.monotonic() - t
    time.sleep(0.5)

    @jax.jit
    def mm(a, b):
        return a @ b

    for dtype in (jnp.bfloat16, jnp.float32):
        a = jax.random.normal(k1, (8192, 8192)).astype(dtype)
        mm(a, a).block_until_ready()
        for _ in range(20):
            r = mm(a, a)
        r.block_until_ready()
        time.sleep(0.3)
    print(f"jax_workload: {jax.devices()[0].device_kind}, jax {jax.__version__}, loss {float(l):.4f}, "
          f"{args.steps} steps in {train_s:.3f} s")


if __name__ == "__main__":
    main()
