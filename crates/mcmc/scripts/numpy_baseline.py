#!/usr/bin/env python3
"""Side-by-side numpy baseline for the Rust benchmarks (2-D banana, n = 100 000, thesis
settings a = 20, sigma1^2 = 20, sigma2^2 = 2.5, sigma0^2 = 1000, data at theta = (0, 3)).

Times (single thread, numpy vectorised, columns stored separately):
  * the fused clip-and-sum pass of per-row log-likelihood ratios (DP penalty's hot loop),
  * one non-private RWMH iteration (full-data log-likelihood ratio),
  * the per-row-clipped gradient sum (DP HMC's hot loop).
NumPyro NUTS on the same model: scripts/numpyro_banana.py.

Run: target/venv-mcmc/bin/python crates/mcmc/scripts/numpy_baseline.py
"""
import time

import numpy as np

A, S1, S2, S0 = 20.0, 20.0, 2.5, 1000.0
N = 100_000
rng = np.random.default_rng(7)
x1 = rng.normal(0.0, np.sqrt(S1), N)
x2 = rng.normal(3.0, np.sqrt(S2), N)


def row_ll(th):
    u = th[1] + A * th[0] ** 2
    return -0.5 * (x1 - th[0]) ** 2 / S1 - 0.5 * (x2 - u) ** 2 / S2


def clip_sum(th, thp, b):
    r = row_ll(thp) - row_ll(th)
    return np.clip(r, -b, b).sum()


def clipped_grad_sum(th, b):
    u = th[1] + A * th[0] ** 2
    g2 = (x2 - u) / S2
    g1 = (x1 - th[0]) / S1 + g2 * 2 * A * th[0]
    nrm = np.sqrt(g1 * g1 + g2 * g2)
    s = np.minimum(1.0, b / np.maximum(nrm, 1e-300))
    return np.array([(g1 * s).sum(), (g2 * s).sum()])


def bench(f, reps):
    f()
    t = time.perf_counter()
    for _ in range(reps):
        f()
    return (time.perf_counter() - t) / reps


th, thp = np.array([0.0, 3.0]), np.array([0.001, 3.002])
t_clip = bench(lambda: clip_sum(th, thp, 5.0), 200)
t_grad = bench(lambda: clipped_grad_sum(th, 5.0), 200)


def rwmh(k):
    cur = np.array([0.0, 3.0])
    for _ in range(k):
        prop = cur + rng.normal(0, [0.02, 0.04])
        lam = (row_ll(prop) - row_ll(cur)).sum()
        if np.log(rng.random()) < lam:
            cur = prop


t_rw = bench(lambda: rwmh(50), 4) / 50
print(f"numpy clip-and-sum pass (n=1e5): {t_clip * 1e3:.3f} ms")
print(f"numpy clipped gradient sum (n=1e5): {t_grad * 1e3:.3f} ms")
print(f"numpy RWMH: {1.0 / t_rw:.0f} it/s")
