#!/usr/bin/env python3
"""Sampling with replacement (Event::SampledWithReplacement of a Gaussian, replace-one):
references for tests/suite/with_replacement.rs. dp_accounting 0.6.0 has the event
(SampledWithReplacementDpEvent) but neither of its accountants accounts it, so the checks
are against 40-digit mpmath:

  bound,m,n,sigma,eps,delta
      the analysed bound (Balle-Barthe-Gaboardi 2018: advanced joint convexity and group
      privacy) for one release: delta(eps) = eta * sum_{k>=1} w_k deltaG(k/sigma; e0) with
      eta = 1 - (1 - 1/n)^m, w_k = P(K = k | K >= 1), K ~ Bin(m, 1/n), e^e0 = 1 + (e^eps - 1)/eta,
      deltaG(s; e) = Phi(s/2 - e/s) - e^e Phi(-s/2 - e/s) (replace-one sensitivity 1 per draw).
  instance,m,n,sigma,eps,delta
      an instance of the mechanism (one dimension; the differing row contributes +1/2, its
      substitute -1/2, every other row 0): P = sum_k b_k N(k/2, sigma^2) against
      Q = sum_k b_k N(-k/2, sigma^2), delta(eps) = int (P - e^eps Q)_+ by quadrature split at
      the loss threshold. The mechanism's delta is at least this (a certified lower bound).

Run (a throw-away venv outside the repository):
  python3 -m venv /work/venv-events && /work/venv-events/bin/pip install mpmath
  /work/venv-events/bin/python gen_with_replacement.py > with_replacement.txt
"""
from mpmath import mp, mpf, exp, log, ncdf, binomial, npdf, quad, findroot, expm1, log1p

mp.dps = 40


def weights(m, n):
    p = mpf(1) / n
    b = []
    for k in range(0, m + 1):
        t = binomial(m, k) * p**k * (1 - p) ** (m - k)
        b.append(t)
        if k > 2 and t < mpf(10) ** -45:
            break
    return b


def dg(s, e):
    return ncdf(s / 2 - e / s) - exp(e) * ncdf(-s / 2 - e / s)


def bound(m, n, sigma, eps):
    b = weights(m, n)
    eta = -expm1(m * log1p(-mpf(1) / n))
    e0 = log(1 + expm1(mpf(eps)) / eta)
    return sum(b[k] * dg(mpf(k) / sigma, e0) for k in range(1, len(b)))


def instance(m, n, sigma, eps):
    b = weights(m, n)
    s = mpf(sigma)
    P = lambda x: sum(bk * npdf(x, mpf(k) / 2, s) for k, bk in enumerate(b))
    Q = lambda x: sum(bk * npdf(x, -mpf(k) / 2, s) for k, bk in enumerate(b))
    e = exp(mpf(eps))
    # the likelihood ratio P/Q increases in x: the positive part is x > x0
    lo, hi = mpf(-50), mpf(50)
    for _ in range(200):
        mid = (lo + hi) / 2
        if P(mid) - e * Q(mid) > 0:
            hi = mid
        else:
            lo = mid
    x0 = (lo + hi) / 2
    pts = [x0] + [x0 + d for d in (1, 2, 4, 8, 16, 32, 64)]
    return quad(lambda x: P(x) - e * Q(x), pts)


CASES = [(10, 1000, 1.0), (100, 1000, 2.0), (256, 60000, 1.0), (5, 10, 3.0)]
print("# sampling with replacement references: gen_with_replacement.py (mpmath 40 digits)")
for m, n, sigma in CASES:
    for eps in (0.0, 0.1, 0.5, 1.0, 2.0):
        print(f"bound,{m},{n},{sigma!r},{eps!r},{mp.nstr(bound(m, n, sigma, eps), 25)}")
for m, n, sigma in CASES:
    for eps in (0.1, 1.0):
        print(f"instance,{m},{n},{sigma!r},{eps!r},{mp.nstr(instance(m, n, sigma, eps), 25)}")
