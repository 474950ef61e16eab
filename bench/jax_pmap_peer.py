"""JAX's side of bench/bench_pmap.cpp: the same MLP training step under
jax.pmap over 8 CPU devices and under jax.jit on one device, and the seed's training loop (linear
regression on 2 devices), timed as the C++ side times them. Prints one line per figure,
"result <name> <median seconds>". Run with XLA_FLAGS=--xla_force_host_platform_device_count=8;
bench_pmap starts it and skips the JAX figures (with this script's message) when JAX is missing.

    XLA_FLAGS=--xla_force_host_platform_device_count=8 python3 bench/jax_pmap_peer.py --batch 4096 --width 512
"""
import argparse
import statistics
import sys
import time

try:
    import jax
    import jax.numpy as jnp
    import numpy as np
except ImportError as e:  # the driver prints this and goes on without JAX
    print(f"JAX is not installed ({e}); pip install jax to compare against it")
    sys.exit(3)

RATE = 0.01


def median_seconds(rounds, f):
    f()  # warm-up (and the compile)
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        f()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def mlp_loss(w1, w2, x, y):
    return jnp.mean(jnp.square(jnp.tanh(x @ w1) @ w2 - y))


def mlp(batch, width, rounds):
    devices = jax.local_devices()
    n = len(devices)
    if n < 8:
        print(f"JAX sees {n} devices, not 8: set XLA_FLAGS=--xla_force_host_platform_device_count=8")
        sys.exit(3)
    rng = np.random.default_rng(0)
    w1 = (rng.standard_normal((width, width)) * 0.05).astype(np.float32)
    w2 = (rng.standard_normal((width, width)) * 0.05).astype(np.float32)
    x = rng.standard_normal((batch, width)).astype(np.float32)
    y = rng.standard_normal((batch, width)).astype(np.float32)
    grads = jax.grad(mlp_loss, argnums=(0, 1))

    def parallel_step(a, b, xs, ys):
        g1, g2 = grads(a, b, xs, ys)
        return a - jax.lax.pmean(g1, "d") * RATE, b - jax.lax.pmean(g2, "d") * RATE

    pstep = jax.pmap(parallel_step, axis_name="d", in_axes=(None, None, 0, 0))
    xs = jax.pmap(lambda v: v)(x.reshape(n, batch // n, width))  # one slice per device, placed once
    ys = jax.pmap(lambda v: v)(y.reshape(n, batch // n, width))
    pw1, pw2 = jax.device_put(w1, devices[0]), jax.device_put(w2, devices[0])
    print(f"result mlp_pmap8 {median_seconds(rounds, lambda: jax.block_until_ready(pstep(pw1, pw2, xs, ys)))}")

    @jax.jit
    def single_step(a, b, xx, yy):
        g1, g2 = grads(a, b, xx, yy)
        return a - g1 * RATE, b - g2 * RATE

    x1, y1 = jax.device_put(x, devices[0]), jax.device_put(y, devices[0])
    print(f"result mlp_jit1 {median_seconds(rounds, lambda: jax.block_until_ready(single_step(pw1, pw2, x1, y1)))}")


def seed_training(steps):
    devices = jax.local_devices()[:2]

    def loss_fn(w, b, xb, yb):
        return jnp.mean(jnp.square(w * xb + b - yb))

    value_and_grad_fn = jax.value_and_grad(loss_fn, argnums=(0, 1))

    def parallel_update_step(w, b, xb, yb):
        loss, (dw, db) = value_and_grad_fn(w, b, xb, yb)
        return jax.lax.pmean(loss, "devices"), jax.lax.pmean(dw, "devices"), jax.lax.pmean(db, "devices")

    step = jax.pmap(parallel_update_step, axis_name="devices", in_axes=(None, None, 0, 0), out_axes=None,
                    devices=devices)
    jax.config.update("jax_enable_x64", True)
    x_data = np.arange(8.0).reshape(2, -1)
    y_data = 3 * x_data + 2
    place = jax.pmap(lambda v: v, devices=devices)
    sx, sy = place(x_data), place(y_data)

    def loop():
        w, b = jnp.asarray(2.0), jnp.asarray(1.0)
        for _ in range(steps):
            _, dw, db = step(w, b, sx, sy)
            w = w - dw * 0.02
            b = b - db * 0.02
        return float(w)

    print(f"result seed_training {median_seconds(1, loop)}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--batch", type=int, default=4096)
    p.add_argument("--width", type=int, default=512)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--steps", type=int, default=1000)
    a = p.parse_args()
    mlp(a.batch, a.width, a.rounds)
    seed_training(a.steps)


if __name__ == "__main__":
    main()
