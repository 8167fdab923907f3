#!/usr/bin/env python3
"""Timings of the numpy/scipy equivalents of the dpinfer-distances benchmarks (same sizes),
for the ratio table in the README. Single-threaded BLAS is not forced; numpy's exp/cdist are
the baseline. Run with the venv of tests/data/gen_reference.py."""
import time
import numpy as np
from scipy.spatial.distance import cdist, pdist

rng = np.random.default_rng(42)


def timeit(f, reps):
    f()
    best = []
    for _ in range(reps):
        t = time.perf_counter()
        f()
        best.append(time.perf_counter() - t)
    return np.median(best) * 1e3


def mmd2(x, y, l):
    g = lambda a, b: np.exp(-cdist(a, b, "sqeuclidean") / (2 * l * l))
    return g(x, x).mean() + g(y, y).mean() - 2 * g(x, y).mean()


def mmd2_cached(kxx, x, y, l):
    g = lambda a, b: np.exp(-cdist(a, b, "sqeuclidean") / (2 * l * l))
    return kxx + g(y, y).mean() - 2 * g(x, y).mean()


for n, d, reps in [(1000, 1, 10), (5000, 1, 3), (1000, 5, 10)]:
    x = rng.normal(size=(n, d)); y = rng.normal(size=(n, d)) + 0.3
    kxx = np.exp(-cdist(x, x, "sqeuclidean") / 2).mean()
    print(f"mmd2 full n=m={n} d={d}: {timeit(lambda: mmd2(x, y, 1.0), reps):.2f} ms")
    print(f"mmd2 cached-obs n=m={n} d={d}: {timeit(lambda: mmd2_cached(kxx, x, y, 1.0), reps):.2f} ms")

x = rng.normal(size=5000); y = rng.normal(size=5000) + 0.5
w = rng.normal(size=50)
ex = np.concatenate([np.cos(np.outer(x, w)), np.sin(np.outer(x, w))], axis=1).mean(0) * np.sqrt(2 / 100)
def rff():
    ey = np.concatenate([np.cos(np.outer(y, w)), np.sin(np.outer(y, w))], axis=1).mean(0) * np.sqrt(2 / 100)
    return np.sqrt(((ex - ey) ** 2).sum())
print(f"rff D=100 n=5000 cached-obs: {timeit(rff, 20):.2f} ms")
for s in [1000, 2000, 5000]:
    print(f"median heuristic n=5000 sub={s}: {timeit(lambda: np.median(pdist(y[:s, None])), 3):.2f} ms")
wt = np.array([1, 1, 2, 10, 100, 100, 10, 10.0])
a = rng.normal(size=8); b = rng.normal(size=8)
t = timeit(lambda: [min(np.sqrt((wt * (a - b) ** 2).sum()), 200.0) for _ in range(1000)], 5)
print(f"clipped weighted L2 k=8: {t:.2f} us per call")  # t ms per 1000 calls = t us per call
A = rng.normal(size=(1000, 8))
print(f"clipped weighted L2 mean n=1000: {timeit(lambda: np.minimum(np.sqrt(((A - b) ** 2 * wt).sum(1)), 200).mean(), 50) * 1e3:.1f} us")
