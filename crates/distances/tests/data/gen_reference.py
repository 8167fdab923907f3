#!/usr/bin/env python3
"""Reference values for dpinfer-distances tests (numpy/scipy, cross-checked with mpmath).

Run:  python3 -m venv /work/main/target/venv-distances
      /work/main/target/venv-distances/bin/pip install numpy scipy mpmath
      /work/main/target/venv-distances/bin/python gen_reference.py > reference.txt
The Rust tests read reference.txt (never Python).
"""
import numpy as np
from scipy.spatial.distance import cdist, pdist, euclidean
import mpmath as mp

mp.mp.dps = 40
rng = np.random.default_rng(20261122)


def gram(a, b, kind, l):
    d = cdist(a, b)  # Euclidean
    if kind == "gauss":
        return np.exp(-(d ** 2) / (2 * l * l))
    if kind == "laplace":
        return np.exp(-d / l)
    if kind == "matern32":
        s = np.sqrt(3.0) * d / l
        return (1 + s) * np.exp(-s)
    raise ValueError(kind)


def mmd2_biased(x, y, kind, l):
    return gram(x, x, kind, l).mean() + gram(y, y, kind, l).mean() - 2 * gram(x, y, kind, l).mean()


def mmd2_unbiased(x, y, kind, l):
    n, m = len(x), len(y)
    kxx, kyy = gram(x, x, kind, l), gram(y, y, kind, l)
    return ((kxx.sum() - np.trace(kxx)) / (n * (n - 1)) + (kyy.sum() - np.trace(kyy)) / (m * (m - 1))
            - 2 * gram(x, y, kind, l).mean())


def mmd2_linear(x, y, kind, l):
    p = len(x) // 2
    h = []
    for i in range(p):
        x1, x2, y1, y2 = x[2 * i:2 * i + 1], x[2 * i + 1:2 * i + 2], y[2 * i:2 * i + 1], y[2 * i + 1:2 * i + 2]
        h.append(gram(x1, x2, kind, l)[0, 0] + gram(y1, y2, kind, l)[0, 0]
                 - gram(x1, y2, kind, l)[0, 0] - gram(x2, y1, kind, l)[0, 0])
    return float(np.mean(h))


def mp_mmd2_gauss(x, y, l):
    def k(a, b):
        return mp.exp(-sum((mp.mpf(float(u)) - mp.mpf(float(v))) ** 2 for u, v in zip(a, b)) / (2 * mp.mpf(l) ** 2))
    n, m = len(x), len(y)
    sxx = mp.fsum(k(a, b) for a in x for b in x)
    syy = mp.fsum(k(a, b) for a in y for b in y)
    sxy = mp.fsum(k(a, b) for a in x for b in y)
    return sxx / n ** 2 + syy / m ** 2 - 2 * sxy / (n * m)


def fmt(v):
    return repr(float(v))


cases = [
    ("1d_small", 7, 5, 1, 1.0, 0.0),
    ("1d_shift", 40, 40, 1, 0.7, 0.8),
    ("2d", 30, 25, 2, 1.3, 0.3),
    ("5d", 24, 24, 5, 2.0, 0.5),
    ("3d_wide", 15, 33, 3, 0.4, 1.0),
]
for name, n, m, d, l, shift in cases:
    x = rng.normal(size=(n, d))
    y = rng.normal(size=(m, d)) * 1.2 + shift
    print(f"case {name} {n} {m} {d} {fmt(l)}")
    print("x " + " ".join(fmt(v) for v in x.ravel()))
    print("y " + " ".join(fmt(v) for v in y.ravel()))
    vb = mmd2_biased(x, y, "gauss", l)
    ref = mp_mmd2_gauss(x, y, l)
    assert abs(vb - float(ref)) < 1e-13, (vb, ref)
    print("mmd2_biased " + fmt(ref))
    print("mmd2_unbiased " + fmt(mmd2_unbiased(x, y, "gauss", l)))
    if n == m:
        print("mmd2_linear " + fmt(mmd2_linear(x, y, "gauss", l)))
    print("laplace_mmd2_biased " + fmt(mmd2_biased(x, y, "laplace", l)))
    print("matern32_mmd2_biased " + fmt(mmd2_biased(x, y, "matern32", l)))
    print("median_y " + fmt(np.median(pdist(y))))
    print("end")

# Weighted L2 (scipy convention sqrt(sum w (u-v)^2)) with the tuberculosis weights.
w = np.array([1, 1, 2, 10, 100, 100, 10, 10], dtype=float)
for i in range(6):
    u = rng.normal(size=8) * 3
    v = rng.normal(size=8) * 3
    print("wl2 " + " ".join(fmt(t) for t in u) + " | " + " ".join(fmt(t) for t in v) + " | " + fmt(euclidean(u, v, w)))
