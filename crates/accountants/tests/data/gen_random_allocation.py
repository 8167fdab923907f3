#!/usr/bin/env python3
"""Random allocation (Event::RandomAllocation, 1 of t steps, add/remove): references for
tests/suite/random_allocation.rs. dp_accounting 0.6.0 has no such event (it is asked for in
its issue tracker and sits in an unmerged pull request), so:

  exact,t,sigma,alpha,rdp_remove
      the remove-direction Renyi divergence D_alpha(P||Q), P = (1/t) sum_i N(e_i/sigma, I_t),
      Q = N(0, I_t), at integer alpha, by enumerating the integer partitions of alpha into at
      most t parts (Feldman & Shenfeld 2025, Corollary 6.2) in 40-digit mpmath -- an
      independent computation of what the library evaluates by series powers.
  mc,t,sigma,alpha,direction,estimate,stderr
      a Monte Carlo estimate (numpy, seed 20261122, 4e6 draws) of
      E_Q[(P/Q)^alpha] (direction remove) or E_P[(Q/P)^alpha] (direction add) as a Renyi
      divergence (1/(alpha-1)) ln(mean), with the delta-method standard error of that log.

Run (a throw-away venv outside the repository):
  /work/venv-events/bin/python gen_random_allocation.py > random_allocation.txt
"""
import numpy as np
from mpmath import mp, mpf, exp, log, factorial

mp.dps = 40


def partitions(n, max_parts, largest=None):
    if largest is None:
        largest = n
    if n == 0:
        yield ()
        return
    if max_parts == 0:
        return
    for first in range(min(n, largest), 0, -1):
        for rest in partitions(n - first, max_parts - 1, first):
            yield (first,) + rest


def remove_exact(t, sigma, alpha):
    a2 = mpf(1) / mpf(sigma) ** 2
    total = mpf(0)
    for p in partitions(alpha, t):
        counts = {}
        for x in p:
            counts[x] = counts.get(x, 0) + 1
        ways = factorial(t) / factorial(t - len(p))
        for c in counts.values():
            ways /= factorial(c)
        multinom = factorial(alpha)
        for x in p:
            multinom /= factorial(x)
        total += ways * multinom * exp(a2 * sum(x * x for x in p) / 2)
    ln_m = log(total) - alpha * (a2 / 2 + log(t))
    return ln_m / (alpha - 1)


def monte_carlo(t, sigma, alpha, direction, rng, n=4_000_000, chunk=500_000):
    a = 1.0 / sigma
    vals = []
    for _ in range(n // chunk):
        z = rng.standard_normal((chunk, t))
        if direction == "add":
            # z ~ P: pick the step, shift it by a
            i = rng.integers(0, t, chunk)
            z[np.arange(chunk), i] += a
        ratio = np.exp(a * z - a * a / 2).mean(axis=1)  # P/Q at z
        lr = ratio if direction == "remove" else 1.0 / ratio
        vals.append(lr ** alpha)
    v = np.concatenate(vals)
    m, s = v.mean(), v.std() / np.sqrt(len(v))
    return np.log(m) / (alpha - 1), s / m / (alpha - 1)


print("# random allocation references: gen_random_allocation.py (mpmath 40 digits; numpy Monte Carlo, seed 20261122)")
for t, sigma in [(1, 1.0), (2, 1.0), (10, 1.0), (100, 2.0), (1000, 0.8)]:
    for alpha in (2, 3, 5, 8, 16):
        if t > 100 and alpha > 8:
            continue
        print(f"exact,{t},{sigma!r},{alpha},{mp.nstr(remove_exact(t, sigma, alpha), 25)}")
rng = np.random.default_rng(20261122)
for t, sigma, alpha in [(10, 1.0, 2), (10, 1.0, 3), (100, 2.0, 2), (4, 1.5, 4)]:
    for direction in ("remove", "add"):
        est, se = monte_carlo(t, sigma, alpha, direction, rng)
        print(f"mc,{t},{sigma!r},{alpha},{direction},{float(est)!r},{float(se)!r}")
