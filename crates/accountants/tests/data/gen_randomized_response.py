#!/usr/bin/env python3
"""k-ary randomized response (Event::RandomizedResponse, replace-one): references for
tests/suite/randomized_response.rs.

For noise p and k buckets, changing one record's value x to x' gives the output laws
  P = (a, b, b, ..., b),  Q = (b, a, b, ..., b),  a = 1 - p + p/k,  b = p/k,
i.e. the privacy loss L = ln(a/b) with P-mass a, -L with P-mass b, 0 with P-mass (k-2)b.

Lines (comma separated):
  rdp,p,k,alpha,mpmath,dp_accounting
      the Renyi divergence D_alpha(P||Q) in 50-digit mpmath (its definition, summed over the
      three output classes), and dp_accounting 0.6.0's
      rdp_privacy_accountant._compute_randomized_response_rdp(p, k, [alpha], REPLACE_ONE).
  delta,p,k,n,eps,exact,dp_accounting
      delta(eps) of n-fold composition: exact by enumerating the multinomial over
      (#L, #-L, #0) counts in 50 digits, delta = sum_{l > eps} (1 - e^{eps - l}) P(l);
      and dp_accounting 0.6.0's PLDAccountant(REPLACE_ONE, value_discretization_interval
      = 1e-4) after n calls compose(RandomizedResponseDpEvent(p, k)), .get_delta(eps).
  eps,p,k,n,delta,exact,dp_accounting
      epsilon(delta): exact by bisection (200 steps) on the exact delta(eps) above, and
      dp_accounting's get_epsilon(delta).
  ignored,p,k,n,eps,dp_accounting
      dp_accounting 0.6.0's PLDAccountant.compose(RandomizedResponseDpEvent(p, k), n) — or
      a SelfComposedDpEvent of it — composes the event ONCE: its randomized-response branch
      never uses `count` (pld_privacy_accountant.py, _maybe_compose). These lines record
      that get_delta(eps), which is below the exact delta for n > 1 (a peer defect).

Run (a throw-away venv outside the repository):
  python3 -m venv /work/venv-events && /work/venv-events/bin/pip install dp-accounting==0.6.0 mpmath
  /work/venv-events/bin/python gen_randomized_response.py > randomized_response.txt
"""
import math

import dp_accounting
from dp_accounting.rdp import rdp_privacy_accountant as rdp
from mpmath import mp, mpf, exp, log, fsum, factorial

mp.dps = 50
REL = dp_accounting.NeighboringRelation.REPLACE_ONE


def pair(p, k):
    p = mpf(p)
    a = 1 - p + p / k
    b = p / k
    return a, b


def rdp_exact(p, k, alpha):
    a, b = pair(p, k)
    alpha = mpf(alpha)
    s = a ** alpha * b ** (1 - alpha) + b ** alpha * a ** (1 - alpha) + (k - 2) * b
    return log(s) / (alpha - 1)


def composed(p, k, n):
    """[(loss, P-mass)] of the n-fold composition (loss = (i - j) L)."""
    a, b = pair(p, k)
    r = (k - 2) * b
    big_l = log(a / b)
    out = {}
    for i in range(n + 1):
        for j in range(n + 1 - i):
            z = n - i - j
            m = factorial(n) / (factorial(i) * factorial(j) * factorial(z))
            w = m * a ** i * b ** j * (r ** z if z else 1)
            out[i - j] = out.get(i - j, 0) + w
    return [(d * big_l, w) for d, w in out.items()]


def delta_exact(pmf, eps):
    eps = mpf(eps)
    return fsum((1 - exp(eps - l)) * w for l, w in pmf if l > eps)


def eps_exact(pmf, delta):
    lo, hi = mpf(0), max(l for l, _ in pmf)
    if delta_exact(pmf, 0) <= delta:
        return mpf(0)
    for _ in range(200):
        mid = (lo + hi) / 2
        if delta_exact(pmf, mid) > delta:
            lo = mid
        else:
            hi = mid
    return hi


def pld(p, k, n, count_ignored=False):
    acc = dp_accounting.pld.PLDAccountant(REL, value_discretization_interval=1e-4)
    event = dp_accounting.RandomizedResponseDpEvent(p, k)
    if count_ignored:
        acc.compose(event, n)
    else:
        # compose(event, n) composes randomized response ONCE (see the header): n calls.
        for _ in range(n):
            acc.compose(event)
    return acc


def g(x):
    return mp.nstr(x, 25, min_fixed=-30, max_fixed=30)


print("# k-ary randomized response references: gen_randomized_response.py (mpmath 50 digits, dp_accounting 0.6.0)")
for p, k in [(0.5, 2), (0.1, 2), (0.9, 2), (0.25, 10), (0.01, 4), (0.999, 3), (1e-6, 100), (0.5, 1000)]:
    for alpha in [1.01, 1.5, 2, 3.5, 8, 32, 256, 4096]:
        ours = rdp._compute_randomized_response_rdp(p, k, [alpha], REL)
        print(f"rdp,{p!r},{k},{alpha!r},{g(rdp_exact(p, k, alpha))},{float(ours[0])!r}")

for p, k, n in [(0.5, 2, 1), (0.5, 2, 10), (0.25, 10, 20), (0.8, 5, 100), (0.9, 2, 60), (0.95, 50, 200), (0.05, 3, 3), (0.97, 4, 300)]:
    pmf = composed(p, k, n)
    acc = pld(p, k, n)
    for eps in [0.0, 0.1, 0.5, 1.0, 2.0, 4.0]:
        print(f"delta,{p!r},{k},{n},{eps!r},{g(delta_exact(pmf, eps))},{float(acc.get_delta(eps))!r}")
    for delta in [1e-3, 1e-5, 1e-8]:
        print(f"eps,{p!r},{k},{n},{delta!r},{g(eps_exact(pmf, delta))},{float(acc.get_epsilon(delta))!r}")
    if n > 1:
        bad = pld(p, k, n, count_ignored=True)
        print(f"ignored,{p!r},{k},{n},1.0,{float(bad.get_delta(1.0))!r}")
